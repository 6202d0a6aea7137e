"""A scripted llama-server with a fixed number of parallel slots that refuses (HTTP 500) any completion beyond
them, as an admission test needs: a request LawDesk should have kept in its own queue fails its stage instead of
waiting unseen inside the server."""

import re
import threading

from tests.support.scripted_server import Reply, ScriptedServer, chat_chunks, json_reply, llama_cpp_routes, sse
from tests.support.stage_server import TIMINGS, words


class SlotCounter:
    """What the server saw: ``peak`` completions at once, ``refused`` beyond the slots, and ``started``, the
    request text matched by ``tag`` (a regex group) of each completion admitted, in the order they began."""

    def __init__(self, slots: int, tag: str) -> None:
        self.slots, self.tag = slots, re.compile(tag)
        self.in_flight = self.peak = self.refused = 0
        self.started: list[str] = []
        self.lock = threading.Lock()


def slot_server(server: ScriptedServer, *, slots: int, tag: str, answer: str, pause_s: float) -> SlotCounter:
    """Script ``server`` as a llama-server of ``slots`` slots whose completions stream ``answer`` a few
    characters every ``pause_s`` seconds. Returns the counter it keeps."""
    counter = SlotCounter(slots, tag)
    llama_cpp_routes(server, timings=TIMINGS, n_ctx=16384, props={"total_slots": slots})

    def streamed():
        freed = False
        try:
            for chunk in chat_chunks(words(answer), timings=TIMINGS):
                yield sse(chunk)
            # The slot is free once the answer is complete, as llama-server frees it: before the last piece is
            # written, since the client may send its next request as soon as it has read it.
            with counter.lock:
                counter.in_flight -= 1
                freed = True
            yield sse("[DONE]")
        finally:
            if not freed:  # the client hung up mid-stream
                with counter.lock:
                    counter.in_flight -= 1

    def completion(body: dict) -> Reply:
        text = " ".join(str(m.get("content", "")) for m in body.get("messages") or [])
        with counter.lock:
            if counter.in_flight >= counter.slots:
                counter.refused += 1
                return json_reply({"error": {"code": 500, "message": "no free slot"}}, 500)
            counter.in_flight += 1
            counter.peak = max(counter.peak, counter.in_flight)
            found = counter.tag.search(text)
            counter.started.append(found.group(1) if found else "?")
        return Reply(pieces=streamed(), pause_s=pause_s)

    server.routes["/v1/chat/completions"] = completion
    return counter

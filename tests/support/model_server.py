"""A scripted llama-server in a process of its own, so a test can kill it with kill -9 in the middle of a stream.

``python -m tests.support.model_server PORT PAUSE_S`` serves every stage's default answer (tests/support/
stage_server.py); the extraction answer streams a few characters per event, ``PAUSE_S`` seconds apart."""

import json
import sys
import threading

from tests.support.scripted_server import Reply, ScriptedServer, chat_chunks, sse
from tests.support.stage_server import TIMINGS, stage_server, words

EXTRACTION = json.dumps({"items": [{"type": "amount", "value": f"${n},250.00", "source": "SMITH000001"}
                                   for n in range(1, 13)]})


def main(port: int, pause_s: float) -> None:
    reply = Reply(pieces=[sse(chunk) for chunk in chat_chunks(words(EXTRACTION, 6), timings=TIMINGS)]
              + [sse("[DONE]")], pause_s=pause_s)
    with ScriptedServer(port) as server:
        stage_server(server, {"extract": lambda call: reply})
        print(f"listening on {server.url}", flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main(int(sys.argv[1]), float(sys.argv[2]))

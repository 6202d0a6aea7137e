"""A scripted model server on loopback for fault tests: each route answers with exact bytes, pieces and pauses.

Real sockets and real HTTP, so the client's own reading (httpx) meets what a broken server really sends: a line
split inside a multi-byte character, two events in one write, a stream that stops, a stall, a 503 while loading.
"""

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from pipeline.llm.hosts import HostAllowlist

# The allowlist of a client built by hand against a scripted server (loopback, any port): the installer's
# LAWDESK_MODEL_HOSTS as the tests set it (tests/conftest.py).
LOOPBACK_HOSTS = HostAllowlist.parse("127.0.0.1")


@dataclass
class Reply:
    """``pieces`` are written one by one with ``pause_s`` between them (the body ends when the connection
    closes); ``hold_s`` keeps the connection open silently after the last piece."""

    status: int = 200
    pieces: list[bytes] = field(default_factory=list)
    content_type: str = "text/event-stream"
    pause_s: float = 0.005
    hold_s: float = 0.0


Route = Callable[[dict], Reply]


class ScriptedServer:
    """Start with ``with ScriptedServer() as server:`` (or ``ScriptedServer(port)``); ``server.url``;
    ``server.routes[path] = fn(body) -> Reply``.
    ``server.requests`` records (path, body); ``server.disconnects`` counts clients that hung up mid-reply."""

    def __init__(self, port: int = 0) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[tuple[str, dict]] = []
        self.disconnects = 0
        self.pieces_sent = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}") if length else {}
                with server._lock:
                    server.requests.append((self.path, body))
                route = server.routes.get(self.path)
                reply = route(body) if route else Reply(status=404, pieces=[b'{"error": "no route"}'],
                                                       content_type="application/json")
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Connection", "close")
                self.end_headers()
                try:
                    for piece in reply.pieces:
                        self.wfile.write(piece)
                        self.wfile.flush()
                        with server._lock:
                            server.pieces_sent += 1
                        time.sleep(reply.pause_s)
                    time.sleep(reply.hold_s)
                except (BrokenPipeError, ConnectionResetError):
                    with server._lock:
                        server.disconnects += 1
                self.close_connection = True

            do_GET = do_POST = _handle

        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> "ScriptedServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def sse(*payloads: dict | str) -> bytes:
    """Encode payloads as SSE ``data:`` events (a str is sent as is, e.g. ``[DONE]``)."""
    return b"".join(
        f"data: {p if isinstance(p, str) else json.dumps(p, ensure_ascii=False)}\n\n".encode() for p in payloads
    )


def chat_chunks(text_pieces: list[str], *, finish: str | None = "stop", timings: dict | None = None,
                finish_on_intermediate=None) -> list[dict]:
    """OpenAI-style chunks for ``text_pieces``; the last chunk carries ``finish`` and llama.cpp ``timings``."""
    chunks = [
        {"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": finish_on_intermediate}],
         "model": "scripted"}
        for piece in text_pieces
    ]
    last = {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "model": "scripted"}
    if timings:
        last["timings"] = timings
    return chunks + [last]


def json_reply(document, status: int = 200) -> Reply:
    """A plain JSON answer (health, props, slots, tags ...)."""
    return Reply(status=status, pieces=[json.dumps(document).encode()], content_type="application/json")


def llama_cpp_routes(server: ScriptedServer, *, timings: dict, health_status: int = 200,
                     slots: list[dict] | None = None, n_ctx: int = 4096, props: dict | None = None) -> None:
    """Script ``server`` as an idle llama-server: /health, /props, /slots, the prompt-counting endpoints, and a
    chat completion whose last chunk carries ``timings``. ``health_status`` 503 answers "Loading model";
    ``props`` adds keys to /props (``build_info``, ``chat_template``, ``model_alias`` ...)."""
    health = ({"status": "ok"} if health_status == 200
              else {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}})
    server.routes["/health"] = lambda body: json_reply(health, health_status)
    server.routes["/props"] = lambda body: json_reply(
        {"default_generation_settings": {"n_ctx": n_ctx}, "model_alias": "scripted", "total_slots": 1,
         **(props or {})})
    idle = [{"id": 0, "is_processing": False}]
    server.routes["/slots"] = lambda body: json_reply(slots if slots is not None else idle)
    server.routes["/apply-template"] = lambda body: json_reply({"prompt": "<user>count</user>"})
    server.routes["/tokenize"] = lambda body: json_reply({"tokens": list(range(12))})
    server.routes["/v1/chat/completions"] = lambda body: Reply(
        pieces=[sse(*chat_chunks(["one", ", two", ", three"], timings=timings), "[DONE]")])

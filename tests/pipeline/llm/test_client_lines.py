"""Stream lines end at CR, LF or CRLF only: a model's text holding U+0085, U+2028 or U+2029 (Unicode line breaks
that ``str.splitlines`` and httpx's ``iter_lines`` also split at) arrives whole, over real sockets, from every
backend's stream format."""

import json

import pytest

from pipeline.llm import Message, ModelClient
from pipeline.llm.client import ServerConfig
from pipeline.llm.stream import crlf_lines
from tests.support.scripted_server import LOOPBACK_HOSTS, Reply, ScriptedServer, chat_chunks, sse

ASK = [Message("user", "Quote the letter.")]
UNICODE_BREAKS = {"NEL": "\u0085", "LINE SEPARATOR": "\u2028", "PARAGRAPH SEPARATOR": "\u2029"}


def text_with(char: str) -> list[str]:
    return [f"The tenant wrote:{char}“we will not pay", f" the rent”{char}{char}(SMITH000002)", f" § 1028A{char}"]


@pytest.fixture
def server():
    with ScriptedServer() as scripted:
        yield scripted


def byte_pieces(data: bytes, size: int = 7) -> list[bytes]:
    """Small writes, so line breaks and multi-byte characters fall across reads."""
    return [data[i:i + size] for i in range(0, len(data), size)]


@pytest.mark.parametrize("name", UNICODE_BREAKS)
@pytest.mark.parametrize("backend", ["llama.cpp", "openai"])
def test_sse_text_with_a_unicode_line_break_arrives_whole(server, backend, name):
    pieces = text_with(UNICODE_BREAKS[name])
    stream = sse(*chat_chunks(pieces, timings={"predicted_n": 3}), "[DONE]")
    assert UNICODE_BREAKS[name].encode() in stream  # raw in the data line, not escaped as \\u....
    server.routes["/v1/chat/completions"] = lambda body: Reply(pieces=byte_pieces(stream), pause_s=0)
    client = ModelClient(ServerConfig(allowed_hosts=LOOPBACK_HOSTS,
                                      base_url=server.url, backend=backend, name="scripted"))
    client._context_tokens = 0
    tokens = []
    generation = client.generate(ASK, on_token=tokens.append)
    assert generation.text == "".join(pieces) and tokens == pieces
    assert generation.finish_reason == "stop"


@pytest.mark.parametrize("name", UNICODE_BREAKS)
def test_ollama_ndjson_text_with_a_unicode_line_break_arrives_whole(server, name):
    pieces = text_with(UNICODE_BREAKS[name])
    lines = [{"model": "m", "message": {"role": "assistant", "content": p}, "done": False} for p in pieces]
    lines.append({"model": "m", "message": {"role": "assistant", "content": ""}, "done": True,
                  "done_reason": "stop", "eval_count": 3, "prompt_eval_count": 9})
    # CRLF line ends, as a proxy may send them; the text itself raw, not escaped.
    stream = b"".join(json.dumps(line, ensure_ascii=False).encode() + b"\r\n" for line in lines)
    server.routes["/api/chat"] = lambda body: Reply(pieces=byte_pieces(stream), pause_s=0,
                                                    content_type="application/x-ndjson")
    client = ModelClient(ServerConfig(allowed_hosts=LOOPBACK_HOSTS,
                                      base_url=server.url, backend="ollama", context_tokens=4096, name="scripted"))
    generation = client.generate(ASK)
    assert generation.text == "".join(pieces)
    assert (generation.prompt_tokens, generation.completion_tokens, generation.truncated) == (9, 3, False)


def test_crlf_lines_splits_at_cr_lf_and_crlf_only_wherever_the_chunks_end():
    text = "a\u2028b\r\nc\rd\ne\u0085\x0b\x0c\x1c\u2029f\r\n\r\ng"
    expected = ["a\u2028b", "c", "d", "e\u0085\x0b\x0c\x1c\u2029f", "", "g"]
    assert list(crlf_lines([text])) == expected
    for size in range(1, 6):  # a CRLF split between two chunks is still one line end
        assert list(crlf_lines(text[i:i + size] for i in range(0, len(text), size))) == expected
    assert list(crlf_lines(["x\r", "", "\ny\r"])) == ["x", "y"]

"""The model-server client against a scripted server: every failure the real servers produce, and the same text
wherever the stream was good."""

import json
import threading
import time

import pytest

from pipeline.llm import (
    Cancelled,
    ContextOverflow,
    Message,
    ModelClient,
    Sampling,
    SchemaError,
    ServerLoading,
    ServerUnavailable,
    StreamBroken,
    StreamTimeout,
)
from pipeline.llm.client import ServerConfig
from tests.support.processes import free_port
from tests.support.scripted_server import LOOPBACK_HOSTS, Reply, ScriptedServer, chat_chunks, sse

CHAT = "/v1/chat/completions"
ASK = [Message("user", "Cite the statute.")]
TEXT_PIECES = ["Under 18 U.S.C. ", "§ 1028A", ", the sentence ", "is mandatory."]
TIMINGS = {"prompt_n": 11, "prompt_per_second": 250.5, "predicted_n": 4, "predicted_per_second": 41.25}


@pytest.fixture
def server():
    with ScriptedServer() as scripted:
        yield scripted


def client_for(server, backend="llama.cpp", **kwargs) -> ModelClient:
    options = {"context_tokens": 4096} if backend == "ollama" else {"context_tokens": None}
    config = ServerConfig(allowed_hosts=LOOPBACK_HOSTS,
                          base_url=server.url, backend=backend, model="scripted", name="scripted server",
                          **{**options, **kwargs.pop("config", {})})
    client = ModelClient(config, **kwargs)
    if backend == "llama.cpp":
        client._context_tokens = 0  # no /props on this server unless a test scripts it
    return client


def good_stream() -> bytes:
    return sse(*chat_chunks(TEXT_PIECES, timings=TIMINGS), "[DONE]")


def test_streamed_text_timings_and_sampling_are_recorded(server):
    server.routes[CHAT] = lambda body: Reply(pieces=[good_stream()])
    tokens = []
    generation = client_for(server).generate(ASK, on_token=tokens.append)
    assert generation.text == "".join(TEXT_PIECES) and tokens == TEXT_PIECES
    assert generation.finish_reason == "stop"
    assert (generation.prompt_tokens, generation.completion_tokens) == (11, 4)
    assert (generation.decode_tok_s, generation.prompt_tok_s) == (41.25, 250.5)
    sent = server.requests[-1][1]
    assert sent["stream"] is True and sent["temperature"] == 0.0 and sent["seed"] == 1234
    assert generation.sampling == Sampling().as_dict()


def test_connection_refused_is_server_unavailable():
    client = ModelClient(ServerConfig(allowed_hosts=LOOPBACK_HOSTS,
                                      base_url=f"http://127.0.0.1:{free_port()}", name="gate"))
    client._context_tokens = 0
    with pytest.raises(ServerUnavailable, match="Could not connect to gate") as caught:
        client.generate(ASK)
    assert caught.value.status == "down"


def test_loading_server_is_waited_for_then_used(server):
    calls = []

    def route(body):
        calls.append(1)
        if len(calls) <= 2:
            return Reply(status=503, content_type="application/json",
                         pieces=[b'{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}'])
        return Reply(pieces=[good_stream()])

    server.routes[CHAT] = route
    generation = client_for(server, loading_wait_s=10).generate(ASK)
    assert generation.text == "".join(TEXT_PIECES) and len(calls) == 3


def test_server_loading_too_long_says_loading(server):
    server.routes[CHAT] = lambda body: Reply(status=503, content_type="application/json",
                                             pieces=[b'{"error":{"code":503,"message":"Loading model"}}'])
    with pytest.raises(ServerLoading, match="still loading its model") as caught:
        client_for(server, loading_wait_s=1).generate(ASK)
    assert caught.value.status == "loading"


@pytest.mark.parametrize("error_line", [
    b'error: {"code":500,"message":"slot unavailable","type":"server_error"}\n\n',  # older llama-server
    b'data: {"error":{"code":500,"message":"slot unavailable","type":"server_error"}}\n\n',  # newer
])
def test_error_event_after_http_200_keeps_the_good_text(server, error_line):
    good = sse(*chat_chunks(TEXT_PIECES[:2], finish=None)[:2])
    server.routes[CHAT] = lambda body: Reply(pieces=[good, error_line])
    with pytest.raises(StreamBroken, match="slot unavailable") as caught:
        client_for(server).generate(ASK)
    assert caught.value.partial_text == "".join(TEXT_PIECES[:2])


def test_data_line_split_at_every_byte_gives_the_same_text(server):
    stream = good_stream()
    section_sign = stream.index("§".encode())
    assert stream[section_sign:section_sign + 2] == "§".encode()  # two bytes: a split can fall between them
    client = client_for(server)
    for cut in range(1, len(stream)):
        server.routes[CHAT] = lambda body, cut=cut: Reply(pieces=[stream[:cut], stream[cut:]], pause_s=0.002)
        assert client.generate(ASK).text == "".join(TEXT_PIECES), cut


def test_two_events_in_one_read_and_ping_comments(server):
    chunks = chat_chunks(TEXT_PIECES, timings=TIMINGS)
    pieces = [sse(chunks[0], chunks[1]), b": ping\n\n", sse(*chunks[2:]) + b": ping\n\n", sse("[DONE]")]
    server.routes[CHAT] = lambda body: Reply(pieces=pieces)
    generation = client_for(server).generate(ASK)
    assert generation.text == "".join(TEXT_PIECES) and generation.finish_reason == "stop"


def test_ollama_openai_endpoint_empty_finish_reason_on_intermediate_chunks(server):
    chunks = chat_chunks(TEXT_PIECES, finish="stop", finish_on_intermediate="")
    server.routes[CHAT] = lambda body: Reply(pieces=[sse(*chunks, "[DONE]")])
    generation = client_for(server, backend="openai").generate(ASK)
    assert generation.text == "".join(TEXT_PIECES) and generation.finish_reason == "stop"
    assert "top_k" not in server.requests[-1][1]  # not an OpenAI field


def test_stream_that_stops_without_done_is_broken(server):
    unfinished = sse(*chat_chunks(TEXT_PIECES, finish=None)[:3])
    server.routes[CHAT] = lambda body: Reply(pieces=[unfinished])
    with pytest.raises(StreamBroken, match="ended before the generation finished") as caught:
        client_for(server).generate(ASK)
    assert caught.value.partial_text == "".join(TEXT_PIECES[:3])


def test_finished_stream_without_done_marker_is_accepted(server):
    server.routes[CHAT] = lambda body: Reply(pieces=[sse(*chat_chunks(TEXT_PIECES))])
    assert client_for(server).generate(ASK).text == "".join(TEXT_PIECES)


def test_read_timeout_between_tokens(server):
    first = sse(*chat_chunks(TEXT_PIECES, finish=None)[:1])
    server.routes[CHAT] = lambda body: Reply(pieces=[first], hold_s=3)
    with pytest.raises(StreamTimeout, match="sent nothing for 1 s") as caught:
        client_for(server, read_timeout_s=1).generate(ASK)
    assert caught.value.partial_text == TEXT_PIECES[0]


def test_cancel_mid_stream_closes_the_connection_and_the_server_stops(server):
    pieces = [sse(chunk) for chunk in chat_chunks([f"w{n} " for n in range(200)], finish=None)]
    server.routes[CHAT] = lambda body: Reply(pieces=pieces, pause_s=0.02)
    cancel = threading.Event()
    received = []

    def on_token(piece):
        received.append(piece)
        if len(received) == 5:
            cancel.set()

    with pytest.raises(Cancelled) as caught:
        client_for(server).generate(ASK, on_token=on_token, cancel=cancel)
    assert caught.value.partial_text == "w0 w1 w2 w3 w4 "
    deadline = time.monotonic() + 5
    while server.disconnects == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.disconnects == 1
    assert server.pieces_sent < 50  # the server stopped writing soon after we hung up


def ollama_lines(pieces: list[str], final: dict | None) -> list[bytes]:
    lines = [json.dumps({"model": "m", "message": {"role": "assistant", "content": p}, "done": False}) + "\n"
             for p in pieces]
    if final is not None:
        lines.append(json.dumps({"model": "m", "message": {"role": "assistant", "content": ""}, "done": True,
                                 **final}) + "\n")
    return [line.encode() for line in lines]


def test_ollama_native_stream_and_its_speed_figures(server):
    final = {"done_reason": "stop", "eval_count": 40, "eval_duration": 800_000_000, "prompt_eval_count": 12,
             "prompt_eval_duration": 30_000_000}
    server.routes["/api/chat"] = lambda body: Reply(pieces=ollama_lines(TEXT_PIECES, final),
                                                    content_type="application/x-ndjson")
    generation = client_for(server, backend="ollama", config={"context_tokens": 8192}).generate(ASK)
    assert generation.text == "".join(TEXT_PIECES)
    assert generation.decode_tok_s == pytest.approx(50.0) and generation.prompt_tok_s == pytest.approx(400.0)
    assert (generation.prompt_tokens, generation.completion_tokens) == (12, 40)
    assert server.requests[-1][1]["options"]["num_ctx"] == 8192


def test_ollama_error_line_mid_stream(server):
    lines = ollama_lines(TEXT_PIECES[:1], None) + [b'{"error":"model runner has unexpectedly stopped"}\n']
    server.routes["/api/chat"] = lambda body: Reply(pieces=lines, content_type="application/x-ndjson")
    with pytest.raises(StreamBroken, match="unexpectedly stopped") as caught:
        client_for(server, backend="ollama").generate(ASK)
    assert caught.value.partial_text == TEXT_PIECES[0]


VERDICT = {"type": "object", "properties": {"has_grounds": {"type": "boolean"}}, "required": ["has_grounds"],
           "additionalProperties": False}


def test_schema_output_is_repaired_once(server):
    answers = iter(['{"has_grounds": "yes"}', '{"has_grounds": true}'])
    server.routes[CHAT] = lambda body: Reply(pieces=[sse(*chat_chunks([next(answers)]), "[DONE]")])
    generation = client_for(server).generate(ASK, schema=VERDICT)
    assert generation.parsed == {"has_grounds": True} and generation.repaired
    first, repair = server.requests[-2][1], server.requests[-1][1]
    assert first["response_format"]["json_schema"]["schema"] == VERDICT
    assert "has_grounds" in repair["messages"][-1]["content"]  # the repair names what was wrong


def test_schema_output_invalid_twice_keeps_the_raw_text(server):
    server.routes[CHAT] = lambda body: Reply(pieces=[sse(*chat_chunks(["not json at all"]), "[DONE]")])
    with pytest.raises(SchemaError, match="does not match the schema twice") as caught:
        client_for(server).generate(ASK, schema=VERDICT)
    assert caught.value.raw_text == "not json at all"


def test_ollama_schema_goes_in_format(server):
    server.routes["/api/chat"] = lambda body: Reply(
        pieces=ollama_lines(['{"has_grounds": false}'], {"eval_count": 5, "eval_duration": 10**8}))
    generation = client_for(server, backend="ollama").generate(ASK, schema=VERDICT)
    assert generation.parsed == {"has_grounds": False}
    assert server.requests[-1][1]["format"] == VERDICT


def test_prompt_that_does_not_fit_is_refused_before_sending(server):
    server.routes["/props"] = lambda body: Reply(content_type="application/json", pieces=[
        json.dumps({"default_generation_settings": {"n_ctx": 64}}).encode()])
    server.routes["/apply-template"] = lambda body: Reply(content_type="application/json", pieces=[
        json.dumps({"prompt": "<start_of_turn>user\n" + body["messages"][0]["content"]}).encode()])
    server.routes["/tokenize"] = lambda body: Reply(content_type="application/json", pieces=[
        json.dumps({"tokens": list(range(60))}).encode()])
    client = client_for(server)
    client._context_tokens = None
    with pytest.raises(ContextOverflow, match="Over by 12 tokens") as caught:
        client.generate(ASK, sampling=Sampling(max_tokens=16))
    assert (caught.value.needed_tokens, caught.value.context_tokens) == (76, 64)
    assert [path for path, _ in server.requests] == ["/props", "/apply-template", "/tokenize"]


def test_ollama_prompt_is_estimated_conservatively(server):
    client = client_for(server, backend="ollama", config={"context_tokens": 100})
    long_prompt = [Message("user", "x" * 300)]
    with pytest.raises(ContextOverflow, match=r"\(estimated\)"):
        client.generate(long_prompt, sampling=Sampling(max_tokens=10))
    assert server.requests == []


def test_never_more_requests_than_slots_and_waiters_go_in_order(server):
    active, peak, order = [0], [0], []
    lock = threading.Lock()

    def route(body):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
            order.append(body["messages"][0]["content"])
        time.sleep(0.15)
        with lock:
            active[0] -= 1
        return Reply(pieces=[good_stream()])

    server.routes[CHAT] = route
    client = client_for(server, config={"parallel_slots": 1})
    threads = []
    for n in range(4):
        thread = threading.Thread(target=client.generate, args=([Message("user", f"request {n}")],))
        thread.start()
        threads.append(thread)
        time.sleep(0.03)  # arrive in a known order
    for thread in threads:
        thread.join(10)
    assert peak[0] == 1
    assert order == [f"request {n}" for n in range(4)]

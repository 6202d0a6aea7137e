"""The client against the real embedded model: llama.cpp's llama-server serving the default model on the CPU."""

import pytest

from pipeline.embedded import EMBEDDED_ALIAS, EMBEDDED_CONTEXT_TOKENS
from pipeline.llm import ContextOverflow, Message, ModelClient, Sampling
from pipeline.llm.client import ServerConfig
from tests.support.scripted_server import LOOPBACK_HOSTS

pytestmark = pytest.mark.live


@pytest.fixture
def client(embedded):
    client = ModelClient(ServerConfig(allowed_hosts=LOOPBACK_HOSTS,
                                      base_url=embedded.base_url, model=EMBEDDED_ALIAS, name="embedded"))
    yield client
    client.close()


def test_health_and_context_come_from_the_server(client):
    assert client.health() == "up"
    assert client.context_tokens() == EMBEDDED_CONTEXT_TOKENS


def test_streamed_generation_with_timings(client):
    pieces = []
    generation = client.generate(
        [Message("user", "Write one sentence about a contract dispute.")],
        sampling=Sampling(max_tokens=48), on_token=pieces.append,
    )
    assert generation.text and "".join(pieces) == generation.text
    assert generation.completion_tokens and 0 < generation.completion_tokens <= 48
    assert generation.prompt_tokens and generation.prompt_tokens > 5
    assert generation.decode_tok_s and generation.decode_tok_s > 0
    assert generation.prompt_tok_s and generation.prompt_tok_s > 0
    assert generation.measured_decode_tok_s and generation.measured_decode_tok_s > 0
    assert generation.finish_reason in ("stop", "length")


def test_same_request_gives_the_same_output(client):
    ask = [Message("user", "Name three parts of a complaint.")]
    first = client.generate(ask, sampling=Sampling(max_tokens=32))
    second = client.generate(ask, sampling=Sampling(max_tokens=32))
    assert first.text == second.text


def test_json_schema_is_honoured(client):
    schema = {
        "type": "object",
        "properties": {
            "has_grounds": {"type": "boolean"},
            "reasons": {"type": "array", "items": {"type": "string", "maxLength": 60}, "maxItems": 2},
        },
        "required": ["has_grounds", "reasons"],
    }
    generation = client.generate(
        [Message("user", "Is a signed lease with unpaid rent grounds for a claim? Answer in JSON.")],
        sampling=Sampling(max_tokens=256), schema=schema,
    )
    assert isinstance(generation.parsed["has_grounds"], bool)
    assert isinstance(generation.parsed["reasons"], list)


def test_prompt_over_the_context_is_refused_before_sending(client):
    sent = []
    client._http.event_hooks["request"].append(lambda request: sent.append(request.url.path))
    huge = [Message("user", "The defendant failed to pay. " * 2000)]
    with pytest.raises(ContextOverflow) as caught:
        client.generate(huge, sampling=Sampling(max_tokens=64))
    assert caught.value.context_tokens == EMBEDDED_CONTEXT_TOKENS
    assert caught.value.needed_tokens > EMBEDDED_CONTEXT_TOKENS
    assert "Over by" in str(caught.value)
    assert "/tokenize" in sent and "/v1/chat/completions" not in sent  # counted exactly, never sent

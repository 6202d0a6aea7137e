"""An Ollama server that cuts an over-long prompt answers normally; its final line's ``prompt_eval_count`` (plus
``prompt_eval_cached_count``) shows how much it read. The client marks such an answer truncated, and the stage
fails with the reason, so no draft rests on evidence the model never read."""

import json

import pytest

from pipeline.llm import Message, ModelClient
from pipeline.llm.client import OLLAMA_TRUNCATED_BELOW, ServerConfig
from pipeline.models import ModelServer, Role, RoleAssignment
from pipeline.stages.control import job_start
from tests.support.jobs import run_all
from tests.support.scripted_server import LOOPBACK_HOSTS, Reply, ScriptedServer
from tests.support.stage_server import DEFAULT, stage_of

LONG_ASK = [Message("user", "The lease says the landlord repairs the roof. " * 65 + "x" * 10)]
VERDICT = {"type": "object", "properties": {"has_grounds": {"type": "boolean"}}, "required": ["has_grounds"]}


@pytest.fixture
def server():
    with ScriptedServer() as scripted:
        yield scripted


def ollama_reply(text: str, **final) -> Reply:
    lines = [{"model": "m", "message": {"role": "assistant", "content": text}, "done": False},
             {"model": "m", "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop",
              "eval_count": 5, "eval_duration": 10**8, **final}]
    return Reply(pieces=[b"".join(json.dumps(line).encode() + b"\n" for line in lines)],
                 content_type="application/x-ndjson")


def ollama_client(server) -> ModelClient:
    return ModelClient(ServerConfig(allowed_hosts=LOOPBACK_HOSTS,
                                    base_url=server.url, backend="ollama", context_tokens=8192, name="scripted"))


@pytest.mark.parametrize(("final", "truncated"), [
    ({"prompt_eval_count": 120}, True),  # the server kept about an eighth of the prompt
    ({"prompt_eval_count": 700}, False),  # about 4 characters a token: all of it read
    ({"prompt_eval_count": 100, "prompt_eval_cached_count": 650}, False),  # most of it from the prompt cache
    ({}, False),  # no count: nothing to check against (prompt_tokens stays None)
])
def test_an_ollama_answer_from_a_cut_prompt_is_marked_truncated(server, final, truncated):
    server.routes["/api/chat"] = lambda body: ollama_reply("The roof is the landlord's.", **final)
    generation = ollama_client(server).generate(LONG_ASK)
    assert generation.text == "The roof is the landlord's."
    assert generation.truncated is truncated
    if final:
        assert generation.prompt_tokens_counted == 1008
    assert (generation.prompt_tokens_counted or 0) * OLLAMA_TRUNCATED_BELOW < 700


def test_a_truncated_schema_answer_is_not_repaired_on_the_cut_prompt(server):
    server.routes["/api/chat"] = lambda body: ollama_reply('{"has_grounds": "yes"}', prompt_eval_count=120)
    generation = ollama_client(server).generate(LONG_ASK, schema=VERDICT)
    assert generation.truncated and generation.parsed is None
    assert len(server.requests) == 1  # no repair request: any answer would rest on the same cut prompt


@pytest.mark.django_db
def test_a_stage_whose_prompt_was_cut_fails_with_the_reason_and_the_job_stops(matter, record, server, attorney,
                                                                                client):
    calls = []

    def chat(body):
        stage = stage_of(body)
        calls.append(stage)
        sent = sum(len(m["content"]) for m in body["messages"])
        # The gate and the plan are read whole (about 4 characters a token); a section's prompt is cut to 40 tokens.
        count = 40 if stage == "section" else sent // 4
        return ollama_reply(DEFAULT[stage], prompt_eval_count=count)

    server.routes["/api/chat"] = chat
    ollama = ModelServer.objects.create(name="office-ollama", base_url=server.url, backend="ollama",
                                        model_name="scripted-model", context_tokens=16384)
    for role in Role:
        RoleAssignment.objects.update_or_create(role=role, defaults={"server": ollama})
    job = job_start(matter=matter, kind="motion", instructions="Move to compel repairs of the roof.",
                    user=attorney, enqueue=False)
    runs = run_all(job)
    assert calls == ["gate", "plan", "section"]
    assert [(r.stage, r.status) for r in runs] == [("gate", "done"), ("plan", "done"), ("section", "failed")]
    draft = runs[2]
    assert "read only 40 tokens of a prompt we counted at about" in draft.error
    assert "does not rest on all the evidence sent" in draft.error
    assert draft.prompt_tokens == 40 and draft.output == DEFAULT["section"]  # kept for the record
    assert job.status == "failed" and job.draft is None  # no draft to approve
    client.force_login(attorney)
    page = client.get(f"/jobs/{job.pk}/").content.decode()
    assert "read only 40 tokens" in page

"""Busy is not down, and slow is not up: probes against scripted servers on loopback whose slots are in use,
whose generation never answers, or whose decode is under the floor; Ollama's names as Ollama resolves them; and
what the topology page and its banner then say."""

import json
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from pipeline.job_models import Job, StageRun, StageStatus
from pipeline.llm.client import ServerConfig
from pipeline.llm.ollama_names import ollama_find, ollama_name, ollama_same_model
from pipeline.models import ModelServer, ProbeResult
from pipeline.topology.probe import probe, server_probe
from tests.support.scripted_server import LOOPBACK_HOSTS, Reply, json_reply, llama_cpp_routes

CHAT = "/v1/chat/completions"
FAST = {"prompt_n": 12, "prompt_per_second": 800.0, "predicted_n": 32, "predicted_per_second": 55.0}


def llama(server, **config) -> ServerConfig:
    return ServerConfig(allowed_hosts=LOOPBACK_HOSTS, base_url=server.url, backend="llama.cpp", model="scripted",
                        name="drafter", **config)


def slots(*busy: bool) -> list[dict]:
    return [{"id": i, "is_processing": b} for i, b in enumerate(busy)]


def never_answers(body) -> Reply:
    return Reply(pieces=[], hold_s=3.0)  # headers, then silence past the probe's read timeout


def test_a_timeout_while_the_other_slots_are_busy_is_busy_not_down(server):
    llama_cpp_routes(server, timings=FAST, slots=slots(True, False))
    state = {"chats": 0}

    def chat(body):  # the probe takes the free slot; the server then has every slot busy and answers nothing
        state["chats"] += 1
        server.routes["/slots"] = lambda body: json_reply(slots(True, True))
        return never_answers(body)

    server.routes[CHAT] = chat
    outcome = probe(llama(server, parallel_slots=2), floor_tok_s=40, read_timeout_s=0.5)
    assert state["chats"] == 1 and outcome.timed_out
    assert outcome.status == "busy" and outcome.slots == [True, False] and outcome.slots_source == "llama.cpp /slots"
    assert outcome.error.startswith("busy, not down: the probe timed out after 0.5 s while the other 1 of 2 slot(s)")


def test_a_timeout_with_idle_slots_is_down(server):
    llama_cpp_routes(server, timings=FAST, slots=slots(False, False))
    server.routes[CHAT] = never_answers
    outcome = probe(llama(server, parallel_slots=2), floor_tok_s=40, read_timeout_s=0.5)
    assert outcome.status == "down" and "sent nothing for" in outcome.error
    server.routes["/slots"] = lambda body: json_reply(slots(False))

    def chat(body):  # the only slot is now the probe's own: nothing else kept the server busy
        server.routes["/slots"] = lambda body: json_reply(slots(True))
        return never_answers(body)

    server.routes[CHAT] = chat
    assert probe(llama(server, parallel_slots=1), floor_tok_s=40, read_timeout_s=0.5).status == "down"


def test_every_slot_busy_skips_the_probe_and_records_the_slots(server):
    llama_cpp_routes(server, timings=FAST, slots=slots(True, True, True))
    outcome = probe(llama(server, parallel_slots=3), floor_tok_s=40)
    assert (outcome.status, outcome.skipped, outcome.slots) == ("busy", True, [True, True, True])
    assert not [path for path, _ in server.requests if path == CHAT]


def ollama_routes(server, *, listed: str, eval_ns: int = 1_000_000_000) -> None:
    server.routes["/api/tags"] = lambda body: json_reply({"models": [{"name": listed, "model": listed}]})
    server.routes["/api/ps"] = lambda body: json_reply({"models": [{"name": listed, "model": listed,
                                                                    "context_length": 8192}]})
    final = {"done": True, "done_reason": "length", "model": listed, "eval_count": 64, "eval_duration": eval_ns,
             "prompt_eval_count": 20, "prompt_eval_duration": 100_000_000}
    server.routes["/api/chat"] = lambda body: Reply(
        pieces=[(json.dumps({"message": {"content": "one"}, "done": False}) + "\n" + json.dumps(final) + "\n"
                 ).encode()], content_type="application/x-ndjson")


def ollama(server, model: str, **config) -> ServerConfig:
    return ServerConfig(allowed_hosts=LOOPBACK_HOSTS, base_url=server.url, backend="ollama", model=model,
                        context_tokens=8192, name="summarizer", **config)


@pytest.mark.parametrize("configured", ["qwen3", "Qwen3", "qwen3:latest", "library/qwen3",
                                        "registry.ollama.ai/library/qwen3:latest"])
def test_ollama_lists_a_configured_name_with_its_implicit_tag(server, configured):
    ollama_routes(server, listed="qwen3:latest")
    outcome = probe(ollama(server, configured), floor_tok_s=40)
    assert (outcome.status, outcome.error, outcome.model) == ("up", "", "qwen3:latest")  # resident, not "not pulled"


def test_ollama_names_resolve_as_ollama_resolves_them(server):
    assert ollama_name("qwen3") == "registry.ollama.ai/library/qwen3:latest"
    assert ollama_name("hf.co/Unsloth/Qwen3-8B-GGUF:Q4_K_M") == "hf.co/unsloth/qwen3-8b-gguf:q4_k_m"
    assert ollama_same_model("gemma3:12b", "GEMMA3:12B") and not ollama_same_model("gemma3:12b", "gemma3:latest")
    assert not ollama_same_model("qwen3:8b", "qwen3") and not ollama_same_model("", "")
    assert ollama_find([{"name": "x"}, {"model": "qwen3:latest"}], "qwen3") == {"model": "qwen3:latest"}
    ollama_routes(server, listed="qwen3:latest")
    outcome = probe(ollama(server, "qwen3:8b"), floor_tok_s=40)  # another tag is another model
    assert outcome.status == "down" and "ollama pull qwen3:8b" in outcome.error


def test_ollama_slots_are_lawdesks_requests_in_flight(server):
    ollama_routes(server, listed="gemma3:12b")
    outcome = probe(ollama(server, "gemma3:12b", parallel_slots=2), floor_tok_s=40, in_flight=2)
    assert outcome.status == "busy" and outcome.skipped and outcome.slots == [True, True]
    assert outcome.slots_source == "LawDesk's requests in flight"
    assert not [path for path, _ in server.requests if path == "/api/chat"]
    server.routes["/api/chat"] = never_answers  # one of two slots taken by a stage, the probe's own times out
    timed_out = probe(ollama(server, "gemma3:12b", parallel_slots=2), floor_tok_s=40, in_flight=1,
                      read_timeout_s=0.5)
    assert timed_out.status == "busy" and "other 1 of 2 slot(s) were busy" in timed_out.error
    counts = iter([0, 1])  # idle when the probe began; a stage took the other slot while it waited
    late = probe(ollama(server, "gemma3:12b", parallel_slots=2), floor_tok_s=40, in_flight=lambda: next(counts),
                 read_timeout_s=0.5)
    assert late.slots == [False, False] and late.status == "busy"
    alone = probe(ollama(server, "gemma3:12b", parallel_slots=2), floor_tok_s=40, read_timeout_s=0.5)
    assert alone.status == "down"  # nothing else was in flight: the server did not answer


@pytest.fixture
def drafter(server, db):
    return ModelServer.objects.create(name="drafter", base_url=server.url, model_name="scripted", parallel_slots=2,
                                      decode_floor_tok_s=40)


def running_stages(drafter, matter, count: int) -> None:
    for order in range(count):  # one job per stage run: two attorneys' motions drafting at once
        job = Job.objects.create(matter=matter, kind="motion", instructions="Draft the motion.")
        StageRun.objects.create(job=job, stage="draft", role="drafter", order=order, server=drafter,
                                status=StageStatus.RUNNING)


@pytest.mark.django_db
def test_a_skipped_probe_says_when_the_speed_was_last_measured(server, drafter, matter):
    llama_cpp_routes(server, timings={**FAST, "predicted_per_second": 12.5}, slots=slots(False, False))
    assert server_probe(server=drafter).status == "slow"
    running_stages(drafter, matter, 2)  # every worker's stages on it: both slots, though /slots is idle now
    server.routes["/slots"] = lambda body: Reply(status=501, pieces=[b'{"error": "slots disabled"}'],
                                                 content_type="application/json")
    skipped = server_probe(server=drafter)
    assert skipped.status == "busy" and skipped.skipped
    assert skipped.slots == {"source": "LawDesk's requests in flight", "busy": [True, True]}
    measured = ProbeResult.objects.filter(server=drafter, skipped=False).get()
    assert f"last measured 12.5 tok/s at {measured.at:%Y-%m-%d %H:%M} UTC (slow: under its floor of 40 tok/s)" \
        in skipped.error
    drafter.refresh_from_db()
    assert drafter.out_of_service_reason == ""


@pytest.fixture
def operator_client(client, make_user):
    client.force_login(make_user("otto", "operator"))
    return client


@pytest.mark.django_db
def test_the_page_shows_slow_with_the_figure_and_the_floor_and_each_slot(operator_client, drafter):
    earlier = timezone.now() - timedelta(minutes=10)
    ProbeResult.objects.create(server=drafter, status="slow", decode_tok_s=12.5, at=earlier,
                               slots={"source": "llama.cpp /slots", "busy": [False, False]})
    ProbeResult.objects.create(server=drafter, status="busy", skipped=True,
                               slots={"source": "llama.cpp /slots", "busy": [True, True]})
    page = operator_client.get(reverse("pipeline:topology")).content.decode()
    banner = page[page.index('id="slow-banner"'):]
    banner = banner[:banner.index("</section>")]
    stamp = f"{timezone.localtime(earlier):%Y-%m-%d %H:%M}"
    assert f"drafter is slow: decode 12.5 tok/s, under its floor of 40 tok/s (12.5 tok/s at {stamp})." in banner
    assert f"every slot busy, speed not measured; last measured 12.5 tok/s at {stamp}" in page
    assert page.count('class="slot slot-busy"') == 2 and "slot 1 busy" in page
    ProbeResult.objects.create(server=drafter, status="up", decode_tok_s=55.0,
                               slots={"source": "llama.cpp /slots", "busy": [True, False]})
    page = operator_client.get(reverse("pipeline:topology")).content.decode()
    assert 'id="slow-banner"' not in page and "decode 55.0 tok/s (floor 40)" in page
    assert "slot 0 busy" in page and "slot 1 idle" in page

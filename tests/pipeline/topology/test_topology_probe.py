"""Probes against a scripted server on loopback: each status (up, slow, loading, down), busy servers skipped,
a reachable /v1/models never enough, the history recorded, the command's JSON lines and the periodic task."""

import json

import pytest
from django.core.management import call_command
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from pipeline.llm.client import ServerConfig
from pipeline.models import ModelServer, ProbeResult
from pipeline.tasks import probe_servers
from pipeline.topology.probe import probe, probe_schedule
from tests.support.processes import free_port
from tests.support.scripted_server import LOOPBACK_HOSTS, Reply, ScriptedServer, json_reply, llama_cpp_routes, sse

CHAT = "/v1/chat/completions"
# The scripted llama-server's /props names no build: the probe says it could not check it.
UNCHECKED = ("llama-server did not report its build (no build_info in /props), so it cannot be checked against the "
             "known llama.cpp problems.")


@pytest.fixture
def scripted():
    with ScriptedServer() as server:
        yield server


def llama(server, **config) -> ServerConfig:
    return ServerConfig(allowed_hosts=LOOPBACK_HOSTS,
                        base_url=server.url, backend="llama.cpp", model="scripted", name="gate", **config)


def chats(server) -> list[dict]:
    return [body for path, body in server.requests if path == CHAT]


def test_fast_server_is_up_with_the_servers_own_speeds(scripted):
    llama_cpp_routes(scripted, timings={"prompt_n": 12, "prompt_per_second": 910.0, "predicted_n": 32,
                                        "predicted_per_second": 55.5})
    outcome = probe(llama(scripted), floor_tok_s=40)
    assert (outcome.status, outcome.decode_tok_s, outcome.prompt_tok_s, outcome.error) == ("up", 55.5, 910.0, "")
    assert outcome.context_tokens == 4096 and not outcome.skipped
    sent = chats(scripted)[0]
    # the full token budget, and a prompt evaluated for real, so the speeds are measured on the same work
    assert sent["ignore_eos"] is True and sent["cache_prompt"] is False and sent["stream"] is True


def test_server_below_its_floor_is_slow(scripted):
    llama_cpp_routes(scripted, timings={"prompt_n": 12, "prompt_per_second": 300.0, "predicted_n": 32,
                                        "predicted_per_second": 12.5})
    outcome = probe(llama(scripted), floor_tok_s=40)
    assert outcome.status == "slow" and outcome.decode_tok_s == 12.5
    assert outcome.error == "decode 12.5 tok/s is below this server's floor of 40 tok/s"
    assert probe(llama(scripted), floor_tok_s=10).status == "up"  # the floor is the server's own


def test_loading_server_says_loading_and_generates_nothing(scripted):
    llama_cpp_routes(scripted, timings={}, health_status=503)
    outcome = probe(llama(scripted), floor_tok_s=40)
    assert outcome.status == "loading" and "Loading model" in outcome.error
    assert chats(scripted) == []


def test_server_that_starts_loading_mid_probe_says_loading(scripted):
    llama_cpp_routes(scripted, timings={})
    scripted.routes[CHAT] = lambda body: json_reply({"error": {"code": 503, "message": "Loading model"}}, 503)
    outcome = probe(llama(scripted), floor_tok_s=40)
    assert outcome.status == "loading" and "still loading" in outcome.error


def test_busy_server_is_skipped_not_queued(scripted):
    busy = [{"id": 0, "is_processing": True}, {"id": 1, "is_processing": True}]
    llama_cpp_routes(scripted, timings={"predicted_per_second": 50.0}, slots=busy)
    outcome = probe(llama(scripted, parallel_slots=2), floor_tok_s=40)
    assert outcome.skipped and outcome.status == "busy" and outcome.decode_tok_s is None
    assert "all 2 slot(s) are busy" in outcome.error
    assert chats(scripted) == []


def test_one_free_slot_is_enough(scripted):
    slots = [{"id": 0, "is_processing": True}, {"id": 1, "is_processing": False}]
    llama_cpp_routes(scripted, timings={"predicted_n": 32, "predicted_per_second": 50.0}, slots=slots)
    outcome = probe(llama(scripted, parallel_slots=2), floor_tok_s=40)
    assert not outcome.skipped and outcome.status == "up" and len(chats(scripted)) == 1


def test_unreachable_server_is_down():
    config = ServerConfig(allowed_hosts=LOOPBACK_HOSTS,
                          base_url=f"http://127.0.0.1:{free_port()}", backend="llama.cpp", name="gone")
    outcome = probe(config, floor_tok_s=40)
    assert outcome.status == "down" and outcome.error.startswith("Could not reach gone")


def test_broken_stream_is_down_with_the_error(scripted):
    llama_cpp_routes(scripted, timings={})
    scripted.routes[CHAT] = lambda body: Reply(pieces=[sse({"error": {"message": "CUDA out of memory"}})])
    outcome = probe(llama(scripted), floor_tok_s=40)
    assert outcome.status == "down" and "CUDA out of memory" in outcome.error


def test_reachable_models_list_alone_is_never_up(scripted):
    scripted.routes["/v1/models"] = lambda body: json_reply({"data": [{"id": "scripted"}]})
    config = ServerConfig(allowed_hosts=LOOPBACK_HOSTS,
                          base_url=scripted.url, backend="openai", model="scripted", name="vllm")
    outcome = probe(config, floor_tok_s=40)  # no chat route: the generation fails
    assert outcome.status == "down" and "HTTP 404" in outcome.error


def ollama_routes(server, *, eval_ns: int, resident=True, pulled=True) -> None:
    server.routes["/api/tags"] = lambda body: json_reply({"models": [{"name": "gemma3:12b"}] if pulled else []})
    server.routes["/api/ps"] = lambda body: json_reply({"models": [{"name": "gemma3:12b"}] if resident else []})
    final = {"done": True, "done_reason": "length", "model": "gemma3:12b", "eval_count": 64, "eval_duration": eval_ns,
             "prompt_eval_count": 20, "prompt_eval_duration": 100_000_000}
    lines = [{"message": {"content": "one, two"}, "done": False}, final]
    server.routes["/api/chat"] = lambda body: Reply(
        pieces=[("\n".join(json.dumps(line) for line in lines) + "\n").encode()], content_type="application/x-ndjson")


def ollama(server) -> ServerConfig:
    return ServerConfig(allowed_hosts=LOOPBACK_HOSTS,
                        base_url=server.url, backend="ollama", model="gemma3:12b", context_tokens=8192, name="gemma")


def test_ollama_speeds_come_from_eval_count_and_duration(scripted):
    ollama_routes(scripted, eval_ns=1_600_000_000)  # 64 tokens in 1.6 s
    outcome = probe(ollama(scripted), floor_tok_s=40)
    assert (outcome.status, outcome.decode_tok_s, outcome.prompt_tok_s) == ("up", 40.0, 200.0)
    ollama_routes(scripted, eval_ns=3_200_000_000)
    assert probe(ollama(scripted), floor_tok_s=40).status == "slow"


def test_ollama_model_not_pulled_is_down(scripted):
    ollama_routes(scripted, eval_ns=1, pulled=False)
    outcome = probe(ollama(scripted), floor_tok_s=40)
    assert outcome.status == "down" and "ollama pull gemma3:12b" in outcome.error


def test_ollama_model_not_resident_is_reported(scripted):
    ollama_routes(scripted, eval_ns=1_000_000_000, resident=False)
    outcome = probe(ollama(scripted), floor_tok_s=40)
    assert outcome.status == "up" and "was not resident" in outcome.error


@pytest.mark.django_db
def test_command_prints_one_glossary_line_per_enabled_server_and_keeps_history(scripted, capsys):
    llama_cpp_routes(scripted, timings={"prompt_n": 12, "prompt_per_second": 800.0, "predicted_n": 32,
                                        "predicted_per_second": 61.0})
    ModelServer.objects.create(name="gate", base_url=scripted.url)
    ModelServer.objects.create(name="gone", base_url=f"http://127.0.0.1:{free_port()}")
    ModelServer.objects.create(name="off", base_url=scripted.url, enabled=False)
    call_command("topology_probe")
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [set(line) for line in lines] == [{"server", "status", "decode_tok_s", "prompt_tok_s", "error",
                                              "forecast_tok_s", "ceiling_tok_s", "build", "warnings"}] * 2
    assert lines[0] == {"server": "gate", "status": "up", "decode_tok_s": 61.0, "prompt_tok_s": 800.0, "error": None,
                        "forecast_tok_s": None, "ceiling_tok_s": None, "build": None, "warnings": [UNCHECKED]}
    assert lines[1]["server"] == "gone" and lines[1]["status"] == "down" and lines[1]["decode_tok_s"] is None
    call_command("topology_probe", "--server", "gate")
    assert ProbeResult.objects.filter(server__name="gate").count() == 2
    assert not ProbeResult.objects.filter(server__name="off").exists()


@pytest.mark.django_db
def test_periodic_task_probes_then_queues_its_next_run(scripted):
    llama_cpp_routes(scripted, timings={"predicted_n": 32, "predicted_per_second": 45.0})
    ModelServer.objects.create(name="gate", base_url=scripted.url)
    lines = probe_servers.call(interval_s=600)
    assert lines == [{"server": "gate", "status": "up", "decode_tok_s": 45.0, "prompt_tok_s": None, "error": None,
                      "forecast_tok_s": None, "ceiling_tok_s": None, "build": None, "warnings": [UNCHECKED]}]
    waiting = DBTaskResult.objects.filter(task_path=probe_servers.module_path, status="READY")
    assert waiting.count() == 1
    assert waiting.get().queue_name == "probes" and waiting.get().run_after > timezone.now()
    assert probe_schedule(interval_s=600) is False and waiting.count() == 1  # never two waiting runs

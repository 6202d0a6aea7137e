"""The llama.cpp build check: each probe stores what /props said, and a build inside a known problem's range for
the server's model is warned about on the probe's output, the topology page and the admin, naming the problem,
the first fixed build and the source. Scripted servers answer the build_info values."""

import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from pipeline.models import ModelServer, ProbeResult
from pipeline.topology.builds import DATA_FILE, build_number, build_problems, known_problems
from pipeline.topology.rules import server_problems
from pipeline.topology.selectors import snapshot_load
from tests.support.scripted_server import ScriptedServer, llama_cpp_routes

pytestmark = pytest.mark.django_db

TIMINGS = {"prompt_n": 12, "prompt_per_second": 300.0, "predicted_n": 32, "predicted_per_second": 55.0}
GEMMA4_TEMPLATE = "{{ bos_token }}{% for m in messages %}<|turn>{{ m.role }}\n{{ m.content }}<turn|>{% endfor %}"


def probe_json(capsys, server: str) -> dict:
    call_command("topology_probe", server=[server])
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_every_known_problem_names_its_source_and_first_fixed_build():
    problems = known_problems()
    assert {p.id for p in problems} >= {"gemma4_chat_parser", "sse_error_field"}
    for problem in problems:
        assert problem.source.startswith("https://github.com/ggml-org/llama.cpp/")
        assert problem.first_fixed_build > 0 and problem.families and problem.feature and problem.advice
    assert DATA_FILE.name.endswith(".json")


@pytest.mark.parametrize("build_info, number", [
    ("b8665-1a2b3c4d", 8665), ("8665 (1a2b3c4d)", 8665), ("b11434", 11434), ("", None), ("unknown", None),
    ("b0-unknown", None),  # built outside llama.cpp's git history: no number, not "build 0"
])
def test_build_numbers_are_read_from_build_info(build_info, number):
    assert build_number(build_info) == number


@pytest.mark.parametrize("build_info, alias, expected", [
    ("b8600-0a1b2c3d", "gemma-4-26b-a4b-it", {"gemma4_chat_parser"}),
    ("b8664-0a1b2c3d", "gemma4:26b", {"gemma4_chat_parser"}),
    ("b8665-0a1b2c3d", "gemma-4-26b-a4b-it", set()),  # the first fixed build
    ("b8600-0a1b2c3d", "qwen3.5-122b-a10b", set()),  # the parser bug is Gemma 4's
    ("b6000-0a1b2c3d", "qwen3.5-122b-a10b", {"sse_error_field"}),  # every model
    ("b6000-0a1b2c3d", "gemma-4-26b-a4b-it", {"sse_error_field", "gemma4_chat_parser"}),
    ("", "gemma-4-26b-a4b-it", set()),  # an unknown build is not guessed at
])
def test_scripted_servers_builds_are_checked_for_their_model(capsys, build_info, alias, expected):
    with ScriptedServer() as scripted:
        llama_cpp_routes(scripted, timings=TIMINGS, props={
            "build_info": build_info, "model_alias": alias, "chat_template": GEMMA4_TEMPLATE,
            "model_path": f"/models/{alias}-Q8_0.gguf"})
        server = ModelServer.objects.create(name="extractor", base_url=scripted.url, model_name=alias,
                                            decode_floor_tok_s=10)
        line = probe_json(capsys, "extractor")
    result = ProbeResult.objects.get(server=server)
    assert (result.build_info, result.chat_template) == (build_info, GEMMA4_TEMPLATE)
    assert line["build"] == (build_info or None) and line["status"] == "up"
    found = {p.id for p in build_problems(build_info, alias)}
    assert found == expected
    if not build_info:  # what cannot be checked is said
        assert line["warnings"] == ["llama-server did not report its build (no build_info in /props), so it "
                                    "cannot be checked against the known llama.cpp problems."]
    else:
        assert len(line["warnings"]) == len(expected)
    for warning in line["warnings"][:len(expected)]:
        assert f"llama.cpp build {build_info} has a known problem" in warning and "first fixed build b" in warning
    if "gemma4_chat_parser" in expected:
        assert any("first fixed build b8665" in w and "pull/21418" in w for w in line["warnings"])
    # the rules table (page banner, admin) says the same from the latest probe
    rules = [p for p in server_problems(server, [], snapshot_load()) if p.rule == "llama_cpp_known_problem"]
    assert len(rules) == len(expected)


def test_a_build_without_a_number_is_said_to_be_unchecked_not_judged(capsys):
    with ScriptedServer() as scripted:
        llama_cpp_routes(scripted, timings=TIMINGS, props={"build_info": "b0-unknown",
                                                           "model_alias": "gemma-4-26b-a4b-it"})
        server = ModelServer.objects.create(name="extractor", base_url=scripted.url, decode_floor_tok_s=10)
        line = probe_json(capsys, "extractor")
    assert line["build"] == "b0-unknown" and len(line["warnings"]) == 1
    assert "carries no build number" in line["warnings"][0] and "cannot be checked" in line["warnings"][0]
    assert [p.rule for p in server_problems(server, [], snapshot_load()) if p.rule == "llama_cpp_known_problem"] == \
        ["llama_cpp_known_problem"]


def test_the_page_and_the_probe_button_show_the_build_warning(client, make_user):
    operator = make_user("otto", "operator")
    with ScriptedServer() as scripted:
        llama_cpp_routes(scripted, timings=TIMINGS, props={"build_info": "b8600-0a1b2c3d",
                                                           "model_alias": "gemma-4-26b-a4b-it"})
        ModelServer.objects.create(name="extractor", base_url=scripted.url, model_name="gemma-4-26b-a4b-it",
                                   decode_floor_tok_s=10)
        client.force_login(operator)
        response = client.post(reverse("pipeline:topology_probe"), follow=True)
    page = response.content.decode()
    assert "extractor: up, 55.0 tok/s" in page
    assert page.count("has a known problem: Gemma 4 replies parsed by the generic chat parser") >= 2  # message, row
    assert "llama.cpp b8600-0a1b2c3d" in page and "first fixed build b8665" in page

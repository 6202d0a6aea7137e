"""Every command line the README shows runs as written, in order, on a fresh database, as a shell would run it.

The README's ``sh`` blocks are read (``make run`` / ``make test`` excepted: they install software and are run by CI
itself); each ``.venv/bin/python manage.py ...`` line runs through ``bash`` in a folder holding the files the
examples name (``a.pdf``, ``scan.tiff``, ``draft.md``, ``VOL001.zip``), against this test's database, with the
embedded model's record pointing at a scripted llama-server. Ids are those of a fresh database
(``reset_sequences``), as on the README.
"""

import json
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from pipeline.models import ModelServer, Role, RoleAssignment
from tests.conftest import BASE_DIR, database_url
from tests.matters.incoming.test_import_production import build_volume
from tests.pipeline.scripted_server import ScriptedServer
from tests.pipeline.stage_server import stage_server

SH_BLOCK = re.compile(r"```sh\n(.*?)```", re.DOTALL)


def readme_commands() -> list[str]:
    """Return the README's command lines (comments cut, continuation lines joined) that run manage.py."""
    readme = (BASE_DIR / "README.md").read_text(encoding="utf-8")
    lines = []
    for block in SH_BLOCK.findall(readme):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#\s.*$", "", line).strip()
            if line.startswith(".venv/bin/python manage.py"):
                lines.append(line)
    return lines


def test_the_readme_shows_the_commands():
    commands = " ".join(readme_commands())
    for name in ("matter_create", "ingest", "exhibit_text", "bates_produce", "import_production",
                 "evidence_packet", "verify_draft", "run_job", "audit_verify", "topology_probe",
                 "topology_load_example", "topology_use_embedded"):
        assert f"manage.py {name}" in commands


@pytest.mark.django_db(transaction=True, reset_sequences=True)
def test_every_readme_command_runs_as_written(tmp_path, corpus, make_user):
    make_user("attorney", "attorney")  # the account `make run` creates
    work = tmp_path / "work"
    work.mkdir()
    shutil.copyfile(corpus("court/ca7_3.pdf"), work / "a.pdf")
    shutil.copyfile(corpus("odd/simple.tiff"), work / "scan.tiff")
    (work / "draft.md").write_text("Plaintiff moves to compel the repairs the lease requires.\n", encoding="utf-8")
    volume = build_volume(tmp_path / "volume")
    with zipfile.ZipFile(work / "VOL001.zip", "w") as archive:
        for path in sorted(volume.rglob("*")):
            archive.write(path, Path("VOL001") / path.relative_to(volume))
    (work / ".venv").symlink_to(BASE_DIR / ".venv")
    (work / "manage.py").symlink_to(BASE_DIR / "manage.py")
    env = dict(os.environ, DATABASE_URL=database_url(), DJANGO_SETTINGS_MODULE="lawdesk.test_settings",
               PYTHONPATH=str(BASE_DIR))
    env.pop("REDIS_URL", None)

    outputs = {}
    with ScriptedServer() as scripted:
        stage_server(scripted)
        # What `make run` records when it starts the embedded model: one server holding every role.
        embedded = ModelServer.objects.create(name="embedded", base_url=scripted.url, model_name="scripted-model",
                                              context_tokens=16384, embedded=True)
        for role in Role:
            RoleAssignment.objects.create(role=role, server=embedded)
        for command in readme_commands():
            done = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=work, env=env,
                                  capture_output=True, text=True, timeout=300)
            if "| head" in command and done.returncode == 141:
                done.returncode = 0  # the reader stopped early: the shell's status for SIGPIPE, said nothing
            assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
            assert "Traceback" not in done.stderr, f"{command}\n{done.stderr[-4000:]}"
            outputs[command.split()[2]] = outputs.get(command.split()[2], "") + done.stdout

    assert outputs["matter_create"].strip() == "1"
    ingested = [json.loads(line) for line in outputs["ingest"].splitlines()]
    assert [(e["exhibit"], e["status"]) for e in ingested] == [(1, "ready"), (2, "ready")]
    produced = json.loads(outputs["bates_produce"])
    assert (produced["status"], produced["first"]) == ("done", "SMITH000001")
    assert json.loads(outputs["evidence_packet"].splitlines()[-1])["sha256"]
    stages = [json.loads(line) for line in outputs["run_job"].splitlines()]
    assert stages and all(s["status"] == "done" for s in stages)
    assert "role drafter: embedded -> drafter" in outputs["topology_load_example"]
    assert "role drafter: drafter -> embedded" in outputs["topology_use_embedded"]

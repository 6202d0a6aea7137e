"""The README and the manual say what works: their commands run as written, and their links lead somewhere.

The session in docs/commands.md (its ``sh`` blocks) runs line by line, in order, on a fresh database, as a shell
would run it: each ``.venv/bin/python manage.py ...`` line through ``bash`` in a folder holding the files the
examples name (``a.pdf``, ``scan.tiff``, ``draft.md``, ``VOL001.zip``), against this test's database, with the
embedded model's record pointing at a scripted llama-server. Ids are those of a fresh database
(``reset_sequences``), as in the manual. The README's two commands (``make run`` / ``make test``) install software
and are run by CI itself; here they are checked to be targets of the Makefile.

Every relative link in README.md and docs/*.md must name a file of the repository, and a link to a heading of a
Markdown file (``file.md#heading``) a heading that file has, with GitHub's rule for turning a heading into an anchor.
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
from tests.support.paths import BASE_DIR
from tests.support.processes import database_url
from tests.support.scripted_server import ScriptedServer
from tests.support.stage_server import stage_server
from tests.support.volumes import build_volume

SH_BLOCK = re.compile(r"```sh\n(.*?)```", re.DOTALL)
COMMANDS_DOC = BASE_DIR / "docs" / "commands.md"


def sh_lines(path: Path) -> list[str]:
    """Return the lines of ``path``'s ``sh`` blocks, comments cut and continuation lines joined."""
    text = path.read_text(encoding="utf-8")
    return [re.sub(r"\s+#\s.*$", "", line).strip()
            for block in SH_BLOCK.findall(text) for line in block.replace("\\\n", " ").splitlines()]


def manual_commands() -> list[str]:
    """Return the command lines of the manual's session (docs/commands.md) that run manage.py, in order."""
    return [line for line in sh_lines(COMMANDS_DOC) if line.startswith(".venv/bin/python manage.py")]


def test_the_readme_shows_the_two_commands_and_the_makefile_has_them():
    makefile = (BASE_DIR / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][\w-]*):", makefile, re.MULTILINE))
    commands = [line for line in sh_lines(BASE_DIR / "README.md") if line]
    assert commands == ["make run", "make test"]
    assert {"run", "test"} <= targets


def test_the_manual_shows_the_commands():
    commands = " ".join(manual_commands())
    for name in ("matter_create", "ingest", "exhibit_text", "bates_produce", "import_production",
                 "evidence_packet", "verify_draft", "run_job", "audit_verify", "topology_probe",
                 "topology_load_example", "topology_use_embedded"):
        assert f"manage.py {name}" in commands


@pytest.mark.django_db(transaction=True, reset_sequences=True)
def test_every_manual_command_runs_as_written(tmp_path, corpus, make_user):
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
        for command in manual_commands():
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


FENCE = re.compile(r"^(```|~~~).*?^\1", re.DOTALL | re.MULTILINE)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def markdown_files() -> list[Path]:
    return [BASE_DIR / "README.md", *sorted((BASE_DIR / "docs").glob("*.md"))]


def anchors(path: Path) -> set[str]:
    """Return the anchors GitHub gives ``path``'s headings: lower case, punctuation but ``-`` and ``_`` dropped,
    spaces turned into ``-``, and ``-1``, ``-2`` ... after a repeated one."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    found = set()
    for heading in HEADING.findall(text):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def broken_links(path: Path, root: Path = BASE_DIR) -> list[str]:
    """Return each relative link of ``path`` (outside code) whose file under ``root`` or heading does not exist."""
    text = CODE_SPAN.sub("", FENCE.sub("", path.read_text(encoding="utf-8")))
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: lead outside: not checked here
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if root.resolve() not in [linked, *linked.parents] or not linked.exists():
            broken.append(f"{target}: no such file in the repository")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: {linked.name} has no heading with that anchor")
    return broken


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: p.name)
def test_every_relative_link_of_the_manual_leads_to_a_file_and_heading(path):
    assert broken_links(path) == []


def test_a_link_to_a_missing_file_or_heading_is_reported(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "other.md").write_text("# Other\n\n## Settings (all)\n", encoding="utf-8")
    page = tmp_path / "docs" / "page.md"
    page.write_text("# Page\n\n## Two words\n\n[ok](#two-words) [ok](other.md#settings-all) [gone](missing.md) "
                    "[no heading](#three-words) [no heading](other.md#settings) `[in code](missing.md)` "
                    "[outside](../../etc/passwd) [web](https://example.com/x)\n", encoding="utf-8")
    assert broken_links(page, root=tmp_path) == ["missing.md: no such file in the repository",
                                                 "#three-words: page.md has no heading with that anchor",
                                                 "other.md#settings: other.md has no heading with that anchor",
                                                 "../../etc/passwd: no such file in the repository"]


def test_the_readme_stays_short():
    # The manual is docs/: the README says what LawDesk is, its two commands, its layout, and links there.
    assert len((BASE_DIR / "README.md").read_bytes()) < 8 * 1024

"""The data directory and everything LawDesk puts in it are for LawDesk's user alone (0700 folders, files
without group or other access), whatever the umask of the shell that started it."""

import os
import stat
import subprocess
import sys

import pymupdf

from tests.support.paths import BASE_DIR


def _manage(data_dir, *args: str) -> str:
    env = dict(os.environ, LAWDESK_DATA_DIR=str(data_dir), DJANGO_SETTINGS_MODULE="lawdesk.settings")
    for name in ("DATABASE_URL", "LAWDESK_TEST_SQLITE", "LAWDESK_SECRET_KEY"):
        env.pop(name, None)
    result = subprocess.run([sys.executable, "manage.py", *args], cwd=BASE_DIR, env=env, capture_output=True,
                            text=True, timeout=600, preexec_fn=lambda: os.umask(0o022))
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_everything_under_the_data_directory_is_private(tmp_path):
    data_dir = tmp_path / "data"
    pdf = tmp_path / "letter.pdf"
    with pymupdf.open() as doc:
        doc.new_page().insert_text((72, 100), "Demand letter dated March 3, 2021, for unpaid rent of $4,200.")
        doc.save(pdf)
    _manage(data_dir, "migrate", "--verbosity", "0")
    matter = _manage(data_dir, "shell", "-c", "from matters.services import matter_create; "
                     "print(matter_create(name='Smith v. Jones', created_by=None).pk)").split()[-1]
    _manage(data_dir, "ingest", "--matter", matter, "--origin", "client", str(pdf))

    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
    database = data_dir / "lawdesk.sqlite3"
    assert database.is_file() and stat.S_IMODE(database.stat().st_mode) & 0o077 == 0
    seen = {"originals": False, "derived": False}
    for path in data_dir.rglob("*"):
        mode = stat.S_IMODE(path.lstat().st_mode)
        assert mode & 0o077 == 0, f"{path.relative_to(data_dir)} is {oct(mode)}"
        if path.is_dir():
            assert mode == 0o700, f"{path.relative_to(data_dir)} is {oct(mode)}"
        for top in seen:
            seen[top] |= path.is_file() and path.relative_to(data_dir).parts[0] == top
    assert all(seen.values()), seen

"""The signing key generated on a new data directory is one key, whoever loads the settings first: a server and two
workers started together on a new install must sign with the same key, and none may fail to start."""

import os
import stat
import subprocess
import sys

from tests.support.paths import BASE_DIR

READ_KEY = "from django.conf import settings; print(settings.SECRET_KEY)"


def test_processes_started_together_on_a_new_data_directory_share_one_key(tmp_path):
    data_dir = tmp_path / "data"
    env = dict(os.environ, LAWDESK_DATA_DIR=str(data_dir), DJANGO_SETTINGS_MODULE="lawdesk.settings")
    env.pop("LAWDESK_SECRET_KEY", None)
    starts = [subprocess.Popen([sys.executable, "-c", f"import django; django.setup(); {READ_KEY}"], cwd=BASE_DIR,
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
              for _ in range(8)]
    results = [(process.communicate(timeout=120), process.returncode) for process in starts]

    assert [code for _, code in results] == [0] * 8, [err for (_, err), _ in results]
    keys = {out.strip() for (out, _), _ in results}
    stored = (data_dir / "secret_key").read_text().strip()
    assert keys == {stored} and len(stored) >= 50
    assert stat.S_IMODE((data_dir / "secret_key").stat().st_mode) == 0o600
    assert sorted(path.name for path in data_dir.iterdir() if "secret" in path.name) == ["secret_key"]


def test_a_key_made_by_another_process_after_this_one_looked_is_the_key_used(tmp_path, monkeypatch):
    from pathlib import Path

    from lawdesk.secret_key import secret_key_of

    path = tmp_path / "secret_key"
    path.write_text("the key the first process wrote")
    # The other process wins between this one's look and its write: the look said there was none.
    real_exists = Path.exists
    monkeypatch.setattr(Path, "exists", lambda self: False if self == path else real_exists(self))

    assert secret_key_of(path) == "the key the first process wrote"
    assert path.read_text() == "the key the first process wrote"
    assert sorted(p.name for p in tmp_path.iterdir() if "secret" in p.name) == ["secret_key"]

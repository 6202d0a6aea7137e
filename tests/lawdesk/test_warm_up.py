"""A web process imports its views and compiles its templates when the ASGI application is imported, before it
serves; a template that does not compile is reported, and the process still starts."""

import json
import os
import subprocess
import sys
from pathlib import Path

from django.conf import settings
from django.test import override_settings

from lawdesk.warm_up import warm_up_in_a_thread

REPO = Path(__file__).resolve().parents[2]
# Run in a process of its own: this one has long since imported the views and compiled the templates.
PROBE = """
import json, sys
from django.template import engines
before = {name: name in sys.modules for name in ("matters.drafts.toa_views", "eyecite", "pipeline.views_digests")}
import lawdesk.asgi
from django.forms.renderers import get_default_renderer


def compiled(engine):  # the names in an engine's cached loader (django-template-partials' loader wraps it)
    found = []
    for loader in engine.template_loaders:
        for inner in [loader, *getattr(loader, "loaders", [])]:
            found += [key for key in getattr(inner, "get_template_cache", {}) if key.endswith(".html")]
    return found


print(json.dumps({"before": before,
                  "after": {name: name in sys.modules for name in before},
                  "compiled": compiled(engines["django"].engine) + compiled(get_default_renderer().engine.engine)}))
"""


def test_importing_the_asgi_application_imports_every_view_and_compiles_the_templates(tmp_path):
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="lawdesk.settings", LAWDESK_DATA_DIR=str(tmp_path),
               DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", LAWDESK_LOG_LEVEL="WARNING")
    env.pop("REDIS_URL", None)
    result = subprocess.run([sys.executable, "-c", "import django; django.setup()\n" + PROBE], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert not any(seen["before"].values()) and all(seen["after"].values())
    # The pages under load, and the form widgets they render.
    for name in ("matters/detail.html", "matters/exhibits/page.html", "matters/drafts/draft_review.html",
                 "django/forms/widgets/select.html"):
        assert name in seen["compiled"]


def test_a_template_that_does_not_compile_is_logged_and_the_rest_still_compile(tmp_path, caplog):
    (tmp_path / "broken.html").write_text("{% if %}")
    (tmp_path / "latin1.html").write_bytes("Exhibit “A”".encode("cp1252"))
    (tmp_path / "fine.html").write_text("{{ value }}")
    templates = [dict(settings.TEMPLATES[0], DIRS=[tmp_path], APP_DIRS=False)]
    with override_settings(TEMPLATES=templates):
        done = warm_up_in_a_thread()
    assert done.failed == ("broken.html", "latin1.html")
    assert done.templates >= 2  # fine.html and the widgets' templates
    assert "Template broken.html does not compile" in caplog.text
    assert "Template latin1.html does not compile" in caplog.text

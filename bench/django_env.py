"""Django for a bench run: a data directory of its own, the embedded SQLite database (``DATABASE_URL`` unset),
migrated. Benches that compare databases (bench/retrieval.py) set their own."""

import os
from pathlib import Path


def setup_django(data_dir: Path) -> None:
    """Point LawDesk at ``data_dir`` and SQLite, start Django and migrate."""
    os.environ["LAWDESK_DATA_DIR"] = str(data_dir)
    os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lawdesk.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def bench_attorney(username: str = "bench"):
    """The bench's user, made once, in the attorney role (``matters.roles``): ``matter_create`` refuses a user who
    may not open matters."""
    from django.contrib.auth import get_user_model

    from matters.roles import role_group

    user = get_user_model().objects.get_or_create(username=username)[0]
    user.groups.add(role_group("attorney"))
    return user

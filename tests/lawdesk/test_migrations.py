"""The models and the migrations describe the same schema: a model changed without its migration would run here
against tables it does not match, and break the next ``migrate`` of a deployment."""

import io

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_makemigrations_finds_nothing_to_write():
    out = io.StringIO()
    try:
        call_command("makemigrations", "--check", "--dry-run", stdout=out, stderr=out)
    except SystemExit:
        # --check exits 1 when a migration is missing; the dry run's output names the app and the changes.
        pytest.fail(f"The models differ from the migrations (run manage.py makemigrations):\n{out.getvalue()}")

"""Refusals are pages an attorney can read, and expected answers leave no traceback in the log."""

import logging

from django.urls import reverse

from tests.matters.test_permission_matrix import a_done_production


def test_a_refusal_is_a_page_of_the_site_saying_why(make_user, attorney, matter, client):
    production = a_done_production(matter, attorney)
    assistant = make_user("ann", "assistant")
    matter.members.add(assistant)
    client.force_login(assistant)
    response = client.post(reverse("matters:production_serve", args=[matter.pk, production.pk]),
                           {"served_to": "Counsel for Jones LLC"})
    page = response.content.decode()
    assert response.status_code == 403
    assert "You are not allowed to do this" in page
    assert 'class="brand"' in page and "ann" in page  # the site's own frame, with who is logged in
    assert reverse("matters:list") in page


def test_a_matter_of_others_is_a_404_page_of_the_site(make_user, attorney, matter, client):
    stranger = make_user("sam", "attorney")
    client.force_login(stranger)
    response = client.get(reverse("matters:detail", args=[matter.pk]))
    page = response.content.decode()
    assert response.status_code == 404
    assert "Not found" in page and 'class="brand"' in page
    assert matter.name not in page


def test_a_403_is_logged_without_its_traceback_and_a_500_keeps_it():
    """Records as Django's log_response writes them (the status on the record), through the configured logger."""
    logger = logging.getLogger("django.request")
    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record)

    handler = Keep()
    logger.addHandler(handler)
    try:
        try:
            raise PermissionError("refused")
        except PermissionError:
            logger.warning("Forbidden (Permission denied): %s", "/x", exc_info=True, extra={"status_code": 403})
        try:
            raise RuntimeError("broken")
        except RuntimeError:
            logger.error("Internal Server Error: %s", "/y", exc_info=True, extra={"status_code": 500})
    finally:
        logger.removeHandler(handler)
    forbidden, broken = records
    assert forbidden.exc_info is None
    assert broken.exc_info is not None and broken.exc_info[0] is RuntimeError

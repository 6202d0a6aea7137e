"""What one poll of the matter page's progress socket reads and sends: one query that reads no file's row while
nothing changed, however many files the matter has; the changed rows and the counts when something did."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from matters.consumers import FULL_READ_S, SETTLE_S, MatterProgressConsumer
from matters.exhibits.services import exhibit_reprocess
from matters.models import Exhibit
from tests.factories import ExhibitFactory

pytestmark = pytest.mark.django_db


def poller(matter) -> MatterProgressConsumer:
    consumer = MatterProgressConsumer()
    consumer.matter, consumer.seen = matter, {}
    assert consumer._changed_rows(initial=True) == []  # the page was rendered with these rows
    return consumer


def settle(time_machine) -> None:
    """Let the newest change grow older than SETTLE_S, as it is on a page left open with nothing processing."""
    time_machine.move_to(timezone.now() + timedelta(seconds=SETTLE_S + 1), tick=False)


def quiet_poll_queries(matter, time_machine) -> list[str]:
    consumer = poller(matter)
    settle(time_machine)
    with CaptureQueriesContext(connection) as queries:
        assert consumer._changed_rows(initial=False) == []
    return [query["sql"] for query in queries]


def test_an_idle_poll_is_one_query_reading_no_row_for_3_or_30_files(matter, time_machine):
    ExhibitFactory.create_batch(3, matter=matter)
    few = quiet_poll_queries(matter, time_machine)
    ExhibitFactory.create_batch(27, matter=matter)
    many = quiet_poll_queries(matter, time_machine)
    assert len(few) == len(many) == 1
    assert "MAX(" in many[0] and '"status"' not in many[0]


def test_a_change_after_a_quiet_while_is_sent_at_the_next_poll(matter, attorney, time_machine):
    failed = ExhibitFactory(matter=matter, status=Exhibit.Status.FAILED, reason="Too large.")
    ExhibitFactory(matter=matter)
    consumer = poller(matter)
    settle(time_machine)
    assert consumer._changed_rows(initial=False) == []
    exhibit_reprocess(exhibit=failed, requested_by=attorney)  # a queryset update: it moves updated_at too
    sent = consumer._changed_rows(initial=False)
    assert f'<tr id="exhibit-{failed.pk}" data-status="queued" hx-swap-oob="true">' in sent[0]


def test_a_write_that_left_updated_at_is_sent_within_the_full_read_interval(matter, time_machine):
    exhibit = ExhibitFactory(matter=matter)
    consumer = poller(matter)
    settle(time_machine)
    Exhibit.objects.filter(pk=exhibit.pk).update(title="Renamed without a stamp")
    assert consumer._changed_rows(initial=False) == []
    consumer.rows_read_at -= FULL_READ_S
    assert "Renamed without a stamp" in "".join(consumer._changed_rows(initial=False))


def test_a_changed_row_and_a_new_one_are_sent_with_the_counts(matter):
    first, second = ExhibitFactory.create_batch(2, matter=matter)
    consumer = poller(matter)
    # A status set by a queryset update (no updated_at) is seen too: the poll compares what the row shows.
    Exhibit.objects.filter(pk=first.pk).update(status=Exhibit.Status.PROCESSING, progress_page=2)
    third = ExhibitFactory(matter=matter, status=Exhibit.Status.QUEUED)
    sent = consumer._changed_rows(initial=False)
    assert len(sent) == 3
    assert f'<tr id="exhibit-{first.pk}" data-status="processing" hx-swap-oob="true">' in sent[0]
    assert "page 2 of" in sent[0]
    assert sent[1].startswith('<tbody hx-swap-oob="beforeend:#exhibit-rows">')
    assert f'<tr id="exhibit-{third.pk}" data-status="queued">' in sent[1]
    assert 'id="exhibit-counts"' in sent[2] and "3 files: 1 evidence" in sent[2]
    assert "2 being processed" in sent[2]
    assert f"exhibit-{second.pk}" not in "".join(sent)
    assert consumer._changed_rows(initial=False) == []

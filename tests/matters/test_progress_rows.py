"""What one poll of the matter page's progress socket reads and sends: one query while nothing changed, however
many files the matter has; the changed rows and the counts when something did."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from matters.consumers import MatterProgressConsumer
from matters.models import Exhibit
from tests.factories import ExhibitFactory

pytestmark = pytest.mark.django_db


def poller(matter) -> MatterProgressConsumer:
    consumer = MatterProgressConsumer()
    consumer.matter, consumer.seen = matter, {}
    assert consumer._changed_rows(initial=True) == []  # the page was rendered with these rows
    return consumer


def quiet_poll_queries(matter) -> int:
    consumer = poller(matter)
    with CaptureQueriesContext(connection) as queries:
        assert consumer._changed_rows(initial=False) == []
    return len(queries)


def test_a_poll_with_nothing_changed_is_one_query_for_3_or_30_files(matter):
    ExhibitFactory.create_batch(3, matter=matter)
    few = quiet_poll_queries(matter)
    ExhibitFactory.create_batch(27, matter=matter)
    assert few == quiet_poll_queries(matter) == 1


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

"""Threads updated for the message just read: only the threads it touches are grouped again, and the result is
what grouping the whole matter gives, whatever order the messages arrive in."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from matters.email.threads import message_threads_update, thread_keys
from matters.models import EmailMessage, Exhibit
from tests.factories import ExhibitFactory, MatterFactory

IDS = [f"<{n}@x>" for n in range(6)]
SUBJECTS = ["", "budget", "lease"]
# One message: its own Message-ID (or none), what it answers (In-Reply-To, References) and its subject.
MESSAGE = st.tuples(st.sampled_from(["", *IDS]), st.sampled_from(["", *IDS]), st.lists(st.sampled_from(IDS),
                    max_size=3), st.sampled_from(SUBJECTS))


def add_message(matter, message_id, in_reply_to, references, subject):
    exhibit = ExhibitFactory(matter=matter, kind=Exhibit.Kind.EMAIL, mime_type="message/rfc822")
    return EmailMessage.objects.create(exhibit=exhibit, source_format="eml", message_id=message_id,
                                       in_reply_to=in_reply_to, references=references, subject_normalised=subject,
                                       native_sha256=exhibit.sha256, body_sha256="0" * 64, body_recorded=True)


@pytest.mark.django_db
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(MESSAGE, min_size=1, max_size=8))
def test_updating_the_touched_threads_gives_what_the_whole_matter_gives(messages):
    matter = MatterFactory()
    for fields in messages:
        message_threads_update(add_message(matter, *fields))
    stored = dict(EmailMessage.objects.filter(exhibit__matter=matter).values_list("id", "thread_key"))
    rows = EmailMessage.objects.filter(exhibit__matter=matter).values_list(
        "id", "message_id", "in_reply_to", "references", "subject_normalised")
    assert stored == thread_keys(list(rows))


@pytest.mark.django_db
def test_a_message_reads_only_the_threads_it_touches():
    matter = MatterFactory()
    for n in range(30):  # thirty other conversations, none of which the new message names or shares a subject with
        message_threads_update(add_message(matter, f"<other-{n}@x>", "", [], f"topic {n}"))
    first = add_message(matter, "<a@x>", "", [], "lease")
    message_threads_update(first)
    reply = add_message(matter, "<b@x>", "<a@x>", ["<a@x>"], "lease")
    with CaptureQueriesContext(connection) as queries:
        keys = message_threads_update(reply)
    assert keys == {f"t{first.pk}"}
    reply.refresh_from_db()
    assert reply.thread_key == f"t{first.pk}"
    read = [q["sql"] for q in queries.captured_queries if q["sql"].lstrip().upper().startswith("SELECT")]
    writes = [q["sql"] for q in queries.captured_queries if q["sql"].lstrip().upper().startswith("UPDATE")]
    # One read finds the touched threads, one reads their messages, one per thread marks its inclusive messages;
    # the one write is the reply's own key (the first message's mark is unchanged: the reply does not quote it).
    assert len(read) == 3 and len(writes) == 1

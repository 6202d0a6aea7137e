"""Attachments that hold other files: a ZIP's files become members of the message's family (an archive inside it
unpacked in turn, under limits that stop a ZIP bomb), and a calendar item becomes a child whose page shows the
meeting."""

import io
import zipfile
from datetime import datetime
from zoneinfo import ZoneInfo

import icalendar
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matters import storage
from matters.email.calendar import looks_like_calendar, read_calendar
from matters.email.containers import ArchiveLimits, unpacked_attachments
from matters.email.parse import Attachment
from matters.models import Exhibit

from .email_messages import as_bytes, ingest_bytes, message, page_text, pdf_bytes

pytestmark = pytest.mark.django_db


def zip_bytes(members: dict[str, bytes], compression=zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_a_zip_attachments_files_become_members_of_the_family_an_inner_zip_unpacked_too(matter, attorney):
    inner = zip_bytes({"schedule-b.pdf": pdf_bytes("Schedule B: the parking allocation for suite 400.")})
    archive = zip_bytes({"leases/lease.pdf": pdf_bytes("Lease of suite 400 at a monthly rent of $12,500."),
                         "leases/": b"", "more.zip": inner})
    mail = message(subject="Lease package", message_id="<zip-1@x.example>")
    mail.add_attachment(archive, maintype="application", subtype="zip", filename="package.zip")
    data = as_bytes(mail)
    parent = ingest_bytes(matter, attorney, data)

    assert parent.status == Exhibit.Status.READY, parent.reason
    assert "Attachments: package.zip" in page_text(parent)  # the header names what the message carried
    children = list(parent.children.order_by("family_position"))
    assert [child.original_name for child in children] == ["package.zip/leases/lease.pdf",
                                                           "package.zip/more.zip/schedule-b.pdf"]
    assert all(child.status == Exhibit.Status.READY for child in children)
    assert "monthly rent of $12,500" in page_text(children[0]) and "parking allocation" in page_text(children[1])
    assert any("package.zip" in note and "unpacked" in note for note in parent.notes)
    assert storage.blob_path(parent.sha256).read_bytes() == data


def test_a_zip_bomb_stops_at_the_size_limit_and_the_rest_of_the_family_goes_on(matter, attorney, settings):
    settings.LAWDESK_ARCHIVE_MAX_MB = 1
    # 64 MiB of zeros deflates to about 64 KiB; its directory says so honestly, and the limit is counted as it
    # inflates anyway.
    bomb = zip_bytes({"readme.pdf": pdf_bytes("Read me first: the archive's index."), "zeros.bin": bytes(64 << 20),
                      "after.pdf": pdf_bytes("Listed after the bomb.")})
    assert len(bomb) < 200_000
    mail = message(subject="Bomb", message_id="<bomb@x.example>")
    mail.add_attachment(bomb, maintype="application", subtype="zip", filename="bomb.zip")
    mail.add_attachment(pdf_bytes("A separate letter, unharmed by the archive."), maintype="application",
                        subtype="pdf", filename="letter.pdf")
    parent = ingest_bytes(matter, attorney, as_bytes(mail))

    assert parent.status == Exhibit.Status.READY, parent.reason
    names = [child.original_name for child in parent.children.order_by("family_position")]
    assert names == ["bomb.zip/readme.pdf", "letter.pdf"]
    assert any("zeros.bin" in note and "LAWDESK_ARCHIVE_MAX_MB" in note for note in parent.notes)
    assert "unharmed by the archive" in page_text(parent.children.get(original_name="letter.pdf"))


def test_archive_depth_and_member_limits_leave_the_rest_named():
    nested = zip_bytes({"level2.zip": zip_bytes({"deep.txt": b"deep"})})
    limits = ArchiveLimits(max_depth=1, max_members=2, max_total_bytes=1 << 20)
    out, problems = unpacked_attachments(
        [Attachment("outer.zip", "application/zip", nested),
         Attachment("many.zip", "application/zip", zip_bytes({f"{n}.txt": b"x" for n in range(5)}))], limits)
    assert [a.name for a in out] == ["outer.zip/level2.zip", "many.zip/0.txt"]
    assert any("level2.zip" in p and "LAWDESK_ARCHIVE_MAX_DEPTH" in p for p in problems)
    assert any("many.zip" in p and "4 of them" in p and "LAWDESK_ARCHIVE_MAX_MEMBERS" in p for p in problems)


def test_office_files_are_not_unpacked_and_a_damaged_archive_stays_as_it_came():
    docx_like = zip_bytes({"[Content_Types].xml": b"<Types/>", "word/document.xml": b"<w:document/>"})
    damaged = b"PK\x03\x04" + bytes(40)
    out, problems = unpacked_attachments([Attachment("brief.docx", "application/octet-stream", docx_like),
                                          Attachment("broken.zip", "application/zip", damaged)],
                                         ArchiveLimits(3, 100, 1 << 20))
    assert [a.data for a in out] == [docx_like, damaged]
    assert any("broken.zip" in p and "could not be opened" in p for p in problems)


def test_an_encrypted_member_is_named_and_left():
    archive = bytearray(zip_bytes({"secret.pdf": b"%PDF-1.4 secret", "open.txt": b"open"}, zipfile.ZIP_STORED))
    # Set the "encrypted" flag (APPNOTE 4.4.4 bit 0) in the first member's local and central headers.
    archive[6] |= 1
    central = archive.find(b"PK\x01\x02")
    archive[central + 8] |= 1
    out, problems = unpacked_attachments([Attachment("locked.zip", "application/zip", bytes(archive))],
                                         ArchiveLimits(3, 100, 1 << 20))
    assert [a.name for a in out] == ["locked.zip/open.txt"]
    assert any("secret.pdf" in p and "encrypted" in p for p in problems)


@pytest.mark.parametrize("compression", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA], ids=["bzip2", "lzma"])
def test_a_bzip2_or_lzma_bomb_never_inflates_past_the_limit_in_memory(compression):
    # zipfile hands a bzip2 or LZMA member's compressed bytes to a decompressor without a limit: 64 MiB of zeros
    # (a few hundred bytes of bzip2) would all be inflated in one read before the budget saw any of it.
    import tracemalloc

    bomb = zip_bytes({"first.txt": b"Read me first.", "zeros.bin": bytes(64 << 20)}, compression)
    assert len(bomb) < 64 << 10
    limits = ArchiveLimits(max_depth=3, max_members=100, max_total_bytes=1 << 20)
    tracemalloc.start()
    try:
        out, problems = unpacked_attachments([Attachment("bomb.zip", "application/zip", bomb),
                                              Attachment("after.txt", "text/plain", b"after")], limits)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20  # the 1 MiB limit and a read's worth of room, never the 64 MiB the member claims
    assert [(a.name, a.data) for a in out] == [("bomb.zip/first.txt", b"Read me first."), ("after.txt", b"after")]
    assert any("bomb.zip/zeros.bin" in p and "LAWDESK_ARCHIVE_MAX_MB" in p for p in problems)


@pytest.mark.parametrize("compression", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA], ids=["bzip2", "lzma"])
def test_bzip2_and_lzma_members_inflate_whole_and_a_bad_crc_is_named(compression):
    text = b"Lease of suite 400 at a monthly rent of $12,500. " * 2000
    archive = zip_bytes({"lease.txt": text, "note.txt": b"note"}, compression)
    out, problems = unpacked_attachments([Attachment("a.zip", "application/zip", archive)],
                                         ArchiveLimits(3, 10, 1 << 20))
    assert [(a.name, a.data) for a in out] == [("a.zip/lease.txt", text), ("a.zip/note.txt", b"note")]
    damaged = bytearray(archive)
    central = damaged.find(b"PK\x01\x02")
    damaged[central + 16] ^= 0xFF  # the first member's CRC-32 in the central directory (APPNOTE 4.3.12)
    out, problems = unpacked_attachments([Attachment("a.zip", "application/zip", bytes(damaged))],
                                         ArchiveLimits(3, 10, 1 << 20))
    assert [a.name for a in out] == ["a.zip/note.txt"]
    assert any("a.zip/lease.txt" in p and "CRC" in p for p in problems)


def invitation_ics() -> bytes:
    calendar = icalendar.Calendar()
    calendar.add("prodid", "-//Tests//EN")
    calendar.add("version", "2.0")
    calendar.add("method", "REQUEST")
    event = icalendar.Event()
    event.add("summary", "Lease walk-through, suite 400")
    event.add("dtstart", datetime(2026, 3, 4, 9, 30, tzinfo=ZoneInfo("America/Los_Angeles")))
    event.add("dtend", datetime(2026, 3, 4, 10, 30, tzinfo=ZoneInfo("America/Los_Angeles")))
    event.add("organizer", "mailto:ana@ruiz-law.example", parameters={"CN": "Ana Ruiz"})
    event.add("attendee", "mailto:ben@stone.example", parameters={"CN": "Ben Stone", "PARTSTAT": "ACCEPTED"})
    event.add("attendee", "mailto:cy@ruiz-law.example", parameters={"PARTSTAT": "DECLINED", "ROLE": "OPT-PARTICIPANT"})
    event.add("location", "Stone LLC, 400 Main St")
    event.add("description", "Bring the floor plan.\nThe landlord's agent will attend.")
    event.add("uid", "walk-1@ruiz-law.example")
    calendar.add_component(event)
    return calendar.to_ical()


def test_a_meeting_invitation_becomes_a_child_showing_the_meeting(client, matter, attorney):
    mail = message(subject="Invitation: Lease walk-through", message_id="<inv@x.example>",
                   body="You are invited to the walk-through.\n")
    # As Outlook sends an invitation: the calendar part is an alternative of the body, not a named file.
    mail.add_alternative(invitation_ics().decode(), subtype="calendar", params={"method": "REQUEST"})
    parent = ingest_bytes(matter, attorney, as_bytes(mail))
    assert parent.status == Exhibit.Status.READY, parent.reason
    assert "You are invited to the walk-through." in page_text(parent)

    [item] = parent.children.all()
    assert item.status == Exhibit.Status.READY, item.reason
    assert item.type_name == "calendar item" and item.original_name.endswith(".ics")
    text = page_text(item)
    for line in ("Calendar item: an invitation (REQUEST)", "Event 1: Lease walk-through, suite 400",
                 "Organizer: Ana Ruiz <ana@ruiz-law.example>",
                 "Start: 2026-03-04 09:30 America/Los_Angeles (UTC: 2026-03-04 17:30:00)",
                 "End: 2026-03-04 10:30 America/Los_Angeles (UTC: 2026-03-04 18:30:00)",
                 "Location: Stone LLC, 400 Main St", "Ben Stone <ben@stone.example> (accepted)",
                 "cy@ruiz-law.example (declined, optional)", "Bring the floor plan.",
                 "The landlord's agent will attend."):
        assert line in text
    client.force_login(attorney)
    page = client.get(item.get_absolute_url())
    assert page.status_code == 200 and parent.display_label in page.content.decode()


def test_an_uploaded_ics_is_read_and_a_damaged_one_fails_with_the_reason(matter, attorney):
    item = ingest_bytes(matter, attorney, invitation_ics(), name="walk-through.ics")
    assert item.kind == Exhibit.Kind.EMAIL and item.status == Exhibit.Status.READY
    assert "Lease walk-through" in page_text(item)
    data = b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nDTSTART:notadate\r\n"
    broken = ingest_bytes(matter, attorney, data, name="broken.ics")
    assert broken.status == Exhibit.Status.FAILED and "calendar" in broken.reason
    assert storage.blob_path(broken.sha256).read_bytes() == data


def test_all_day_floating_and_utc_times_say_which_they_are():
    data = (b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nSUMMARY:Closing\r\nDTSTART;VALUE=DATE:20260401\r\n"
            b"END:VEVENT\r\nBEGIN:VEVENT\r\nSUMMARY:Call\r\nDTSTART:20260402T150000\r\nDTEND:20260402T160000Z\r\n"
            b"END:VEVENT\r\nEND:VCALENDAR\r\n")
    calendar = read_calendar(data)
    assert [item.start for item in calendar.items] == [
        "2026-04-01 (all day)", "2026-04-02 15:00 (floating: no timezone, read as the attendee's local time)"]
    assert calendar.items[1].end == "2026-04-02 16:00 UTC (UTC: 2026-04-02 16:00:00)"


def calendar_with_zone(tzid: str, observances: str, start: str = "20260701T100000") -> bytes:
    return ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VTIMEZONE\r\nTZID:" + tzid + "\r\n" + observances
            + "END:VTIMEZONE\r\nBEGIN:VEVENT\r\nUID:z@x.example\r\nSUMMARY:Deposition\r\n"
            + f"DTSTART;TZID=\"{tzid}\":{start}\r\nDURATION:PT1H\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n").encode()


def observance(kind: str, start: str, offset_from: str, offset_to: str, rule: str) -> str:
    return (f"BEGIN:{kind}\r\nDTSTART:{start}\r\nTZOFFSETFROM:{offset_from}\r\nTZOFFSETTO:{offset_to}\r\n"
            f"RRULE:{rule}\r\nEND:{kind}\r\n")


# Outlook names a zone it defines itself like this, and defines it from 1601.
OUTLOOK_PACIFIC = "(UTC-08:00) Pacific Time (US & Canada)"
PACIFIC_RULES = (observance("STANDARD", "16011104T020000", "-0700", "-0800", "FREQ=YEARLY;BYDAY=1SU;BYMONTH=11")
                 + observance("DAYLIGHT", "16010311T020000", "-0800", "-0700",
                              "FREQ=YEARLY;BYDAY=2SU;BYMONTH=3;UNTIL=20991231T000000Z"))


def test_a_calendars_own_timezone_converts_its_times_to_utc():
    summer = read_calendar(calendar_with_zone(OUTLOOK_PACIFIC, PACIFIC_RULES))
    winter = read_calendar(calendar_with_zone(OUTLOOK_PACIFIC, PACIFIC_RULES, "20260110T100000"))
    assert summer.items[0].start == f"2026-07-01 10:00 {OUTLOOK_PACIFIC} (UTC: 2026-07-01 17:00:00)"
    assert summer.items[0].end == f"2026-07-01 11:00 {OUTLOOK_PACIFIC} (UTC: 2026-07-01 18:00:00)"
    assert winter.items[0].start == f"2026-01-10 10:00 {OUTLOOK_PACIFIC} (UTC: 2026-01-10 18:00:00)"
    assert summer.problems == [] and winter.problems == []


def test_a_calendar_cannot_change_how_a_later_calendar_reads_a_zone_of_the_same_name():
    # icalendar keeps the first definition of a zone name it does not know for the whole process: a hostile file
    # read first would shift every later calendar's times in that zone.
    hostile = observance("STANDARD", "16010101T000000", "+0500", "+0500", "FREQ=YEARLY;BYMONTH=1;BYMONTHDAY=1")
    assert read_calendar(calendar_with_zone(OUTLOOK_PACIFIC, hostile)).items[0].start.endswith(
        "(UTC: 2026-07-01 05:00:00)")
    honest = read_calendar(calendar_with_zone(OUTLOOK_PACIFIC, PACIFIC_RULES))
    assert honest.items[0].start == f"2026-07-01 10:00 {OUTLOOK_PACIFIC} (UTC: 2026-07-01 17:00:00)"


@pytest.mark.parametrize("rule", ["FREQ=SECONDLY", "FREQ=YEARLY;BYHOUR=0,6,12,18",
                                  "FREQ=YEARLY;BYMONTH=1,2,3,4,5,6,7,8,9,10,11,12;BYMONTHDAY=1"])
def test_a_timezone_that_changes_more_than_yearly_is_not_expanded_and_its_times_are_shown_as_written(rule):
    # Expanding FREQ=SECONDLY from 1970 to the event would take billions of onsets (and keep them cached).
    rules = (observance("STANDARD", "19700101T000000", "+0100", "+0000", rule)
             + observance("DAYLIGHT", "19700101T000001", "+0000", "+0100", rule))
    calendar = read_calendar(calendar_with_zone("Evil/Zone", rules))
    item = calendar.items[0]
    assert item.summary == "Deposition"
    assert item.start.startswith("2026-07-01 10:00 Evil/Zone (not converted to UTC: the calendar's own definition")
    assert item.end.startswith("2026-07-01 11:00 Evil/Zone (not converted to UTC")
    assert len(calendar.problems) == 1 and "“Evil/Zone”" in calendar.problems[0]


def test_a_zone_neither_defined_nor_known_is_said_not_called_floating():
    data = (b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nSUMMARY:Call\r\n"
            b"DTSTART;TZID=Nowhere/Zone:20260402T150000\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
    calendar = read_calendar(data)
    assert calendar.items[0].start == ("2026-04-02 15:00 Nowhere/Zone (not converted to UTC: the calendar does not "
                                       "define it and it is not a timezone LawDesk knows)")
    assert any("Nowhere/Zone" in problem for problem in calendar.problems)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["BEGIN:VCALENDAR", "END:VCALENDAR", "BEGIN:VEVENT", "END:VEVENT", "SUMMARY:x",
                                 "DTSTART:20260101T000000Z", "DTSTART;TZID=Nowhere/Zone:20260101T000000",
                                 "DTEND;VALUE=DATE:2026", "ATTENDEE;CN=\"A\":mailto:a@b", "RRULE:FREQ=WEEKLY",
                                 "DURATION:PT1H", "ORGANIZER:", " folded", "\u00e9", "X:\\n\\,",
                                 "BEGIN:VTIMEZONE", "END:VTIMEZONE", "TZID:Nowhere/Zone", "BEGIN:STANDARD",
                                 "END:STANDARD", "DTSTART:19700101T000000", "TZOFFSETFROM:+0100",
                                 "TZOFFSETTO:+0000", "RRULE:FREQ=SECONDLY", "RRULE:FREQ=YEARLY;BYMONTH=3"]),
                max_size=16).map("\r\n".join), st.binary(max_size=20))
def test_no_calendar_text_makes_the_reader_raise(text, noise):
    data = text.encode() + noise
    calendar = read_calendar(data)
    assert calendar.items or calendar.problems
    assert looks_like_calendar(data) == data.upper().startswith(b"BEGIN:VCALENDAR\r\n")

"""Read a calendar item (iCalendar, RFC 5545: an ``.ics`` file, or the ``text/calendar`` part of a meeting invitation)
into what its exhibit's page shows: for each event or task, its summary, organizer, attendees with their replies,
start and end with their timezone and the same instants in UTC, location, recurrence and description.

Parsed with ``icalendar`` 7.3, which resolves a ``TZID`` through the calendar's own ``VTIMEZONE`` or the IANA
database. Never raises: a calendar that cannot be read gives no items and a problem saying why. Django-free.
"""

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

_BEGIN = re.compile(rb"^(?:\xef\xbb\xbf)?[\s]*BEGIN:VCALENDAR\s*\r?\n", re.IGNORECASE)
# Outlook writes an attendee's reply as PARTSTAT (RFC 5545 section 3.2.12); shown as the words it stands for.
_REPLIES = {"ACCEPTED": "accepted", "DECLINED": "declined", "TENTATIVE": "tentative", "DELEGATED": "delegated",
            "NEEDS-ACTION": "no reply", "COMPLETED": "completed", "IN-PROCESS": "in process"}
_ROLES = {"OPT-PARTICIPANT": "optional", "NON-PARTICIPANT": "for information", "CHAIR": "chair"}


@dataclass
class CalendarItem:
    """One event (``VEVENT``) or task (``VTODO``) as its page shows it; every field is text as printed, '' when
    the item does not have it. ``start`` and ``end`` read ``2026-03-04 09:30 America/Los_Angeles (UTC: 2026-03-04
    17:30:00)``, a date alone ``2026-03-04 (all day)``, a time without a zone ``... (floating: no timezone)``."""

    kind: str
    summary: str = ""
    organizer: str = ""
    attendees: list[str] = field(default_factory=list)
    start: str = ""
    end: str = ""
    location: str = ""
    recurrence: str = ""
    status: str = ""
    description: str = ""
    uid: str = ""


@dataclass
class Calendar:
    """A calendar file read: ``method`` (``REQUEST`` an invitation, ``REPLY``, ``CANCEL`` ... RFC 5546), its
    ``items``, and ``problems`` written for an attorney."""

    method: str = ""
    items: list[CalendarItem] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def looks_like_calendar(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes) begins an iCalendar object (``BEGIN:VCALENDAR``, RFC 5545 section
    3.4)."""
    return bool(_BEGIN.match(head[:4096]))


def read_calendar(data: bytes) -> Calendar:
    """The calendar in ``data`` (UTF-8, RFC 5545 section 3.1.4; other bytes read as Windows-1252 with a problem
    noted); never raises."""
    calendar = Calendar()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("cp1252", errors="replace")
        calendar.problems.append("The calendar is not UTF-8 as iCalendar requires; it was read as Windows-1252.")
    try:
        import icalendar

        parsed = icalendar.Calendar.from_ical(text)
    except Exception as exc:  # icalendar raises ValueError and others for damaged content; ImportError too
        calendar.problems.append(f"The calendar could not be read ({type(exc).__name__}: {str(exc)[:200]}); the "
                                 "original is kept unchanged.")
        return calendar
    calendar.method = _text(parsed.get("METHOD")).upper()
    for component in parsed.walk():
        if component.name not in ("VEVENT", "VTODO"):
            continue
        try:
            calendar.items.append(_item(component))
        except Exception as exc:  # one damaged property: the item is named, the others go on
            calendar.problems.append(f"A calendar {component.name[1:].lower()} could not be read "
                                     f"({type(exc).__name__}); the original is kept unchanged.")
    if not calendar.items and not calendar.problems:
        calendar.problems.append("The calendar holds no event or task.")
    return calendar


def _item(component) -> CalendarItem:
    item = CalendarItem("event" if component.name == "VEVENT" else "task")
    item.summary = _text(component.get("SUMMARY"))
    item.organizer = _person(component.get("ORGANIZER"))
    attendees = component.get("ATTENDEE") or []
    item.attendees = [_attendee(one) for one in (attendees if isinstance(attendees, list) else [attendees])]
    item.start = _when(component.get("DTSTART"))
    end = component.get("DTEND") if component.name == "VEVENT" else component.get("DUE")
    if end is None and component.get("DURATION") is not None and component.get("DTSTART") is not None:
        end_value = component.get("DTSTART").dt + component.get("DURATION").dt
        item.end = _format(end_value)
    else:
        item.end = _when(end)
    item.location = _text(component.get("LOCATION"))
    rule = component.get("RRULE")
    item.recurrence = rule.to_ical().decode() if rule is not None else ""
    item.status = _text(component.get("STATUS")).lower()
    item.description = _text(component.get("DESCRIPTION"))
    item.uid = _text(component.get("UID"))
    return item


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return "; ".join(_text(one) for one in value)
    return str(value).strip()


def _person(address) -> str:
    """``Ana Ruiz <ana@ruiz-law.example>`` from a CAL-ADDRESS (``mailto:`` taken off) and its CN parameter."""
    if address is None:
        return ""
    email = re.sub(r"^mailto:", "", str(address).strip(), flags=re.IGNORECASE)
    name = str(getattr(address, "params", {}).get("CN", "")).strip()
    return f"{name} <{email}>" if name and email else name or email


def _attendee(address) -> str:
    params = getattr(address, "params", {})
    details = [_REPLIES.get(str(params.get("PARTSTAT", "")).upper(), "")]
    details.append(_ROLES.get(str(params.get("ROLE", "")).upper(), ""))
    details = [detail for detail in details if detail]
    return _person(address) + (f" ({', '.join(details)})" if details else "")


def _when(prop) -> str:
    if prop is None:
        return ""
    return _format(prop.dt, str(prop.params.get("TZID", "")))


def _format(value, tzid: str = "") -> str:
    if isinstance(value, datetime):
        if value.tzinfo is None:
            return f"{value:%Y-%m-%d %H:%M} (floating: no timezone, read as the attendee's local time)"
        zone = tzid or str(getattr(value.tzinfo, "key", "") or value.tzname() or "")
        if value.utcoffset() == timedelta(0) and not tzid:
            zone = "UTC"
        return f"{value:%Y-%m-%d %H:%M} {zone} (UTC: {value.astimezone(UTC):%Y-%m-%d %H:%M:%S})"
    if isinstance(value, date):
        return f"{value:%Y-%m-%d} (all day)"
    return str(value)

"""Read a calendar item (iCalendar, RFC 5545: an ``.ics`` file, or the ``text/calendar`` part of a meeting invitation)
into what its exhibit's page shows: for each event or task, its summary, organizer, attendees with their replies,
start and end with their timezone and the same instants in UTC, location, recurrence and description.

Parsed with ``icalendar`` 7.3. A ``TZID`` is resolved here, not by ``icalendar``, which keeps the first
``VTIMEZONE`` it ever sees for a name it does not know in a cache for the whole process: a calendar read later
(another matter's) that names the same zone would be converted to UTC by the first file's rules. Here a known name
(IANA, ``America/Los_Angeles``, or a Windows name Outlook writes, ``Pacific Standard Time``) is read from the IANA
database (``tzdata``), and any other from the calendar's own ``VTIMEZONE`` (RFC 5545 section 3.6.5), built afresh
for each file. A ``VTIMEZONE`` whose changes repeat more often than yearly (``RRULE:FREQ=SECONDLY`` would be
expanded from its start, 1970 or 1601, to the event: billions of onsets) is not used: times in it are shown as
written, not converted, with a problem saying why. Never raises: a calendar that cannot be read gives no items
and a problem saying why. Django-free.
"""

import re
import zoneinfo
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from itertools import islice

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
    zones = _Zones(parsed, calendar.problems)
    for component in parsed.walk():
        if component.name not in ("VEVENT", "VTODO"):
            continue
        try:
            calendar.items.append(_item(component, zones))
        except Exception as exc:  # one damaged property: the item is named, the others go on
            calendar.problems.append(f"A calendar {component.name[1:].lower()} could not be read "
                                     f"({type(exc).__name__}); the original is kept unchanged.")
    if not calendar.items and not calendar.problems:
        calendar.problems.append("The calendar holds no event or task.")
    return calendar


def _item(component, zones: "_Zones") -> CalendarItem:
    item = CalendarItem("event" if component.name == "VEVENT" else "task")
    item.summary = _text(component.get("SUMMARY"))
    item.organizer = _person(component.get("ORGANIZER"))
    attendees = component.get("ATTENDEE") or []
    item.attendees = [_attendee(one) for one in (attendees if isinstance(attendees, list) else [attendees])]
    item.start = _when(component.get("DTSTART"), zones)
    end = component.get("DTEND") if component.name == "VEVENT" else component.get("DUE")
    if end is None and component.get("DURATION") is not None and component.get("DTSTART") is not None:
        start, tzid = zones.localised(component.get("DTSTART"))
        item.end = _format(start + component.get("DURATION").dt, tzid, zones.unresolved.get(tzid, ""))
    else:
        item.end = _when(end, zones)
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


def _when(prop, zones: "_Zones") -> str:
    if prop is None:
        return ""
    value, tzid = zones.localised(prop)
    return _format(value, tzid, zones.unresolved.get(tzid, ""))


def _format(value, tzid: str = "", unresolved: str = "") -> str:
    if isinstance(value, datetime):
        if value.tzinfo is None and tzid:
            return f"{value:%Y-%m-%d %H:%M} {tzid} (not converted to UTC: {unresolved})"
        if value.tzinfo is None:
            return f"{value:%Y-%m-%d %H:%M} (floating: no timezone, read as the attendee's local time)"
        zone = tzid or str(getattr(value.tzinfo, "key", "") or value.tzname() or "")
        if value.utcoffset() == timedelta(0) and not tzid:
            zone = "UTC"
        return f"{value:%Y-%m-%d %H:%M} {zone} (UTC: {value.astimezone(UTC):%Y-%m-%d %H:%M:%S})"
    if isinstance(value, date):
        return f"{value:%Y-%m-%d} (all day)"
    return str(value)


# A timezone changes its offset once or twice a year (RFC 5545 section 3.6.5: each STANDARD or DAYLIGHT observance
# recurs yearly); an observance whose rule gives a third onset within a year of its start is not a timezone's.
_MAX_ONSETS_A_YEAR = 2


class _Zones:
    """The timezones a calendar's times name (see the module docstring), each resolved once per file; ``unresolved``
    maps a TZID that could not be used to why, and each is said once in ``problems``."""

    def __init__(self, parsed, problems: list[str]) -> None:
        self.own = {str(tz.get("TZID", "")).strip("/"): tz for tz in parsed.walk("VTIMEZONE")}
        self.problems = problems
        self.zones: dict[str, object] = {}
        self.unresolved: dict[str, str] = {}

    def localised(self, prop) -> tuple[object, str]:
        """A DATE-TIME property's value in the timezone its TZID names, and that TZID ('' when it has none); the
        value as written (naive) when the zone cannot be used."""
        value, tzid = prop.dt, str(prop.params.get("TZID", ""))
        if not tzid or not isinstance(value, datetime):
            return value, tzid
        zone = self.zone(tzid)
        return value.replace(tzinfo=zone), tzid

    def zone(self, tzid: str):
        if tzid not in self.zones:
            zone, why = self._resolved(tzid)
            self.zones[tzid] = zone
            if zone is None:
                self.unresolved[tzid] = why
                self.problems.append(f"Times in the timezone “{tzid}” are shown as written, not converted to UTC: "
                                     f"{why}.")
        return self.zones[tzid]

    def _resolved(self, tzid: str):
        from icalendar.timezone.windows_to_olson import WINDOWS_TO_OLSON

        cleaned = tzid.strip("/")
        for name in (cleaned, WINDOWS_TO_OLSON.get(cleaned)):
            if not name:
                continue
            try:
                return zoneinfo.ZoneInfo(name), ""
            except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
                continue
        own = self.own.get(cleaned)
        if own is None:
            return None, "the calendar does not define it and it is not a timezone LawDesk knows"
        why = _unusable(own)
        if why:
            return None, f"the calendar's own definition of it {why}"
        try:
            from icalendar.timezone import tzp

            return tzp.create_timezone(own), ""  # built afresh, never icalendar's process-wide cache
        except Exception as exc:  # dateutil's tzical raises ValueError and others for a damaged definition
            return None, f"the calendar's own definition of it could not be read ({type(exc).__name__})"


def _unusable(timezone) -> str:
    """Why a VTIMEZONE's observances cannot be expanded safely ('' when they can): a rule that is not yearly, or
    that gives more than :data:`_MAX_ONSETS_A_YEAR` onsets in its first year."""
    from dateutil.rrule import rrulestr
    from icalendar.prop import vRecur

    for observance in timezone.subcomponents:
        rules = observance.get("RRULE") or []
        start = observance.get("DTSTART")
        for rule in rules if isinstance(rules, list) else [rules]:
            frequency = [str(one).upper() for one in rule.get("FREQ", [])]
            if frequency != ["YEARLY"]:
                return f"repeats its changes {'/'.join(frequency).lower() or 'without a frequency'}, not yearly"
            if start is None or not isinstance(start.dt, datetime):
                return "has a rule without a start"
            # UNTIL and COUNT only shorten a rule; left out, the onsets counted are the same and never meet
            # dateutil's refusal of a UTC UNTIL with a local start.
            counted = vRecur({key: value for key, value in rule.items() if key not in ("UNTIL", "COUNT")})
            try:
                begin = start.dt.replace(tzinfo=None)
                onsets = list(islice(rrulestr(counted.to_ical().decode(), dtstart=begin),
                                     _MAX_ONSETS_A_YEAR + 1))
            except (ValueError, TypeError, OverflowError) as exc:
                return f"has a rule that could not be read ({type(exc).__name__})"
            if len(onsets) > _MAX_ONSETS_A_YEAR and onsets[-1] < begin + timedelta(days=366):
                return f"changes its offset more than {_MAX_ONSETS_A_YEAR} times a year"
    return ""

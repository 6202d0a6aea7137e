"""Deadlines saved on a matter, counted by :mod:`matters.deadlines.counting`, and the days the office enters as
not days to file (a court's closures, declared holidays)."""

from django.conf import settings
from django.db import models

from matters.deadlines.counting import RuleSet, Service


class Deadline(models.Model):
    """One counted period of a matter, kept as it was counted: what it was counted from (``event_date``, and
    ``event_time`` for a period in hours, in the court's time zone, ``TIME_ZONE``), under which rules
    (``rules``: Fed. R. Civ. P. 6 or Fed. R. App. P. 26), how long (``period`` in ``unit``, ``before`` for a
    period counted back from the event), how the paper was served (``service``, Fed. R. Civ. P. 5(b)(2)), the
    state whose holidays count (6(a)(6)(C), two letters, or blank), the result (``due_date``; ``due_at``: the
    moment it ends, the end of the due day for a period in days) and ``steps``, the counting line by line (a
    list of strings, as :class:`matters.deadlines.counting.Deadline` gives it). Written only through
    :mod:`matters.deadlines.services`."""

    class Unit(models.TextChoices):
        DAYS = "days", "days"
        HOURS = "hours", "hours"

    matter = models.ForeignKey("matters.Matter", on_delete=models.PROTECT, related_name="deadlines")
    title = models.CharField(max_length=300, help_text="what is due, e.g. Opposition to the motion to dismiss")
    event_date = models.DateField()
    event_time = models.TimeField(null=True, blank=True)
    rules = models.CharField(max_length=4, choices=[(r.value, r.citation) for r in RuleSet], default=RuleSet.FRCP.value)
    period = models.PositiveIntegerField()
    unit = models.CharField(max_length=5, choices=Unit.choices, default=Unit.DAYS)
    before = models.BooleanField(default=False, help_text="counted back from the event (e.g. 14 days before a hearing)")
    service = models.CharField(max_length=12, choices=[(s.value, s.value) for s in Service], default=Service.NONE.value)
    state = models.CharField(max_length=2, blank=True)
    due_date = models.DateField()
    due_at = models.DateTimeField()
    steps = models.JSONField(default=list)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["due_date", "due_at", "id"]

    def __str__(self) -> str:
        return f"{self.title} (due {self.due_date:%Y-%m-%d})"

    @property
    def rule_citation(self) -> str:
        return RuleSet(self.rules).citation


class CourtClosedDay(models.Model):
    """A day the office enters as not a day to file, for every matter: ``closed``, the clerk's office
    inaccessible (Fed. R. Civ. P. 6(a)(3), Fed. R. App. P. 26(a)(3): weather, a court's closure order), or
    ``holiday``, a day declared a holiday by the President or Congress (6(a)(6)(B), 26(a)(6)(B)). ``reason`` is
    said in every deadline's counting that the day moves."""

    class Kind(models.TextChoices):
        CLOSED = "closed", "Clerk's office inaccessible"
        HOLIDAY = "holiday", "Declared holiday"

    day = models.DateField(unique=True)
    kind = models.CharField(max_length=8, choices=Kind.choices, default=Kind.CLOSED)
    reason = models.CharField(max_length=300, help_text="e.g. General Order 26-04: courthouse closed (snow)")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["day"]

    def __str__(self) -> str:
        return f"{self.day:%Y-%m-%d}: {self.reason}"

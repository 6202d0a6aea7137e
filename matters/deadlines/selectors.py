"""Reads of a matter's deadlines."""

from django.db.models import QuerySet
from django.http import Http404

from matters.models import Deadline, Matter


def matter_deadlines(matter: Matter) -> QuerySet[Deadline]:
    """The matter's saved deadlines, soonest first."""
    return Deadline.objects.filter(matter=matter).select_related("created_by")


def deadline_of_matter(matter: Matter, deadline_id: int) -> Deadline:
    """The deadline ``deadline_id`` of ``matter`` (already checked for the user); Http404 otherwise."""
    deadline = Deadline.objects.filter(matter=matter, pk=deadline_id).first()
    if deadline is None:
        raise Http404("No such deadline.")
    return deadline

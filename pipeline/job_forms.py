"""Forms of the job pages. The services of :mod:`pipeline.stages.control` judge what the forms carry; their
refusals go on the form (on the field they name), and the page shows them in its message area."""

from django import forms
from django.core.exceptions import ValidationError


class _ServiceForm(forms.Form):
    def refused(self, error: ValidationError) -> None:
        """Put the service's refusal on the field it names, or on the form."""
        if hasattr(error, "error_dict"):
            for field, errors in error.error_dict.items():
                self.add_error(field if field in self.fields else None, errors)
        else:
            self.add_error(None, error)

    def messages(self) -> list[str]:
        """Every error of the form, as sentences for the page's message area."""
        return [message for errors in self.errors.values() for message in errors]


class JobStartForm(_ServiceForm):
    """Start a job: ``kind`` (blank: the router decides), ``instructions`` and ``due_at``, the filing deadline the
    queue orders by (optional; read in the office's time zone, ``LAWDESK_TIME_ZONE``). The exhibits chosen come
    as a list beside it. :func:`pipeline.stages.control.job_start` judges them all."""

    kind = forms.CharField(required=False)
    # Judged by the service, which says what to write when it is empty.
    instructions = forms.CharField(required=False, strip=False)
    due_at = forms.DateTimeField(label="Due (filing deadline)", required=False,
                                 error_messages={"invalid": "Give the due date and time as 2026-12-04 17:00."})


class JobFrontForm(_ServiceForm):
    """Move a job to the front of the queue: the reason, written to the audit entry
    (:func:`pipeline.stages.control.job_move_to_front` judges it and the job)."""

    reason = forms.CharField(label="Why this job goes first", max_length=500, widget=forms.Textarea(attrs={"rows": 2}),
                             error_messages={"required": "Say why this job should go ahead of the others."})

"""Forms of the job pages. The services of :mod:`pipeline.stages.control` judge what the forms carry; their
refusals go on the form (on the field they name), and the page shows them in its message area."""

from django import forms
from django.core.exceptions import ValidationError

from matters.validation import form_refusal


class _ServiceForm(forms.Form):
    def refused(self, error: ValidationError) -> None:
        """Put the service's refusal on the field it names, or on the form."""
        form_refusal(self, error)

    def messages(self) -> list[str]:
        """Every error of the form, as sentences for the page's message area."""
        return [message for errors in self.errors.values() for message in errors]


class JobFrontForm(_ServiceForm):
    """Move a job to the front of the queue: the reason, written to the audit entry
    (:func:`pipeline.stages.control.job_move_to_front` judges it and the job)."""

    reason = forms.CharField(label="Why this job goes first", max_length=500, widget=forms.Textarea(attrs={"rows": 2}),
                             error_messages={"required": "Say why this job should go ahead of the others."})

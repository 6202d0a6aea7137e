"""The forms of the job pages: starting a job from a matter's jobs page, moving a job to the front of the queue.
What they carry is judged by the services of :mod:`pipeline.stages.control`, whose refusals the views put on the
field at fault (:func:`matters.validation.form_refusal`)."""

from django import forms

from matters.models import Deadline, Matter

from .job_models import JobKind


class ExhibitIds(forms.Field):
    """Exhibit ids as the page's checkboxes send them; whether each is the matter's evidence is the service's to
    say (with the ids it refuses)."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value) -> list[int]:
        try:
            return [int(v) for v in value or []]
        except (TypeError, ValueError) as error:
            raise forms.ValidationError("Exhibits are chosen by their ids, whole numbers.") from error


class JobStartForm(forms.Form):
    """``kind`` (blank: the router decides), ``instructions``, ``exhibits`` (ids; none: all the evidence, checked
    by the service), and the due time: one of the matter's saved ``deadline``\\ s, or ``due_at`` as entered."""

    kind = forms.ChoiceField(choices=[("", "Let the router decide from the instructions"), *JobKind.choices],
                             required=False, label="Job")
    instructions = forms.CharField(label="Instructions, in plain words", widget=forms.Textarea(attrs={"rows": 4}))
    exhibits = ExhibitIds(required=False)
    deadline = forms.ModelChoiceField(queryset=Deadline.objects.none(), required=False, label="Due by a saved deadline",
                                      empty_label="No saved deadline")
    due_at = forms.DateTimeField(required=False, label="or due at",
                                 widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
                                 help_text="in the court's time zone",
                                 error_messages={"invalid": "Give the due date and time as 2026-12-04 17:00."})

    def __init__(self, *args, matter: Matter, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["deadline"].queryset = Deadline.objects.filter(matter=matter)
        self.fields["deadline"].label_from_instance = lambda d: (
            f"{d.title}: due {d.due_date:%Y-%m-%d}" + (f" {d.due_at:%H:%M}" if d.unit == Deadline.Unit.HOURS else ""))


class JobFrontForm(forms.Form):
    """Move a job to the front of the queue: the reason, written to the audit entry
    (:func:`pipeline.stages.control.job_move_to_front` judges it and the job)."""

    reason = forms.CharField(label="Why this job goes first", max_length=500, widget=forms.Textarea(attrs={"rows": 2}),
                             error_messages={"required": "Say why this job should go ahead of the others."})


class JobContinueForm(forms.Form):
    """Let a job go on past a gate that found no grounds: the attorney's reason, as typed (judged by
    :func:`pipeline.stages.control.job_continue`, which records it)."""

    reason = forms.CharField(required=False, strip=False, max_length=2000,
                             widget=forms.Textarea(attrs={"rows": 2}))


class StageSkipForm(forms.Form):
    """Let a job go on without its failed revision: the attorney's reason, as typed (judged by
    :func:`pipeline.stages.control.stage_skip`, which records it)."""

    reason = forms.CharField(required=False, strip=False, max_length=2000,
                             widget=forms.Textarea(attrs={"rows": 2}))


class DiscoverForm(forms.Form):
    """Record the GPUs this machine's NVML reports under ``host`` (blank: this machine's name)."""

    host = forms.CharField(required=False, max_length=200, label="Record the GPUs under host")

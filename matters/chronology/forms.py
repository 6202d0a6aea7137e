"""The chronology's filter: which exhibits, which span of dates."""

from django import forms
from django.core.exceptions import ValidationError


class ChronologyFilterForm(forms.Form):
    """``exhibit``: the matter's evidence exhibits to keep (none: all); ``start``/``end``: the span of dates to
    keep, both days included (a range touching the span is kept)."""

    exhibit = forms.ModelMultipleChoiceField(queryset=None, required=False, label="Exhibits",
                                             widget=forms.CheckboxSelectMultiple)
    start = forms.DateField(required=False, label="From", widget=forms.DateInput(attrs={"type": "date"}))
    end = forms.DateField(required=False, label="To", widget=forms.DateInput(attrs={"type": "date"}))

    def __init__(self, *args, exhibits, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["exhibit"].queryset = exhibits
        self.fields["exhibit"].label_from_instance = lambda e: f"{e.display_label} – {e.title}"

    def clean(self) -> dict:
        cleaned = super().clean()
        start, end = cleaned.get("start"), cleaned.get("end")
        if start and end and start > end:
            self.add_error("end", ValidationError("The end of the span comes before its start."))
        return cleaned

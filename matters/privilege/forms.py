"""The forms of the privilege pages: a redaction box drawn on a page, boxes picked by search, and a row of a
production's privilege log. Reason codes, patterns and what a log row may hold are the services' to judge
(:mod:`matters.privilege.services`, :mod:`matters.privilege.redaction_search`, :mod:`matters.privilege.log`),
whose refusals go on the field at fault."""

from django import forms

from .log import EDITABLE

BOX_NUMBERS = "A redaction box needs four numbers (left, top, right, bottom, in points)."


def _coordinate(label: str) -> forms.FloatField:
    return forms.FloatField(label=label, error_messages={"required": BOX_NUMBERS, "invalid": BOX_NUMBERS})


class RedactionBoxForm(forms.Form):
    """A box drawn on the page viewer: ``x0``, ``y0``, ``x1``, ``y1`` in points on the displayed page, and its
    reason code."""

    x0 = _coordinate("Left")
    y0 = _coordinate("Top")
    x1 = _coordinate("Right")
    y1 = _coordinate("Bottom")
    reason = forms.CharField(required=False)

    def rect(self) -> tuple[float, float, float, float]:
        data = self.cleaned_data
        return data["x0"], data["y0"], data["x1"], data["y1"]


class RedactSearchForm(forms.Form):
    """Redact every match of ``query`` (words, or a regular expression with ``regex``) on the exhibit's pages."""

    query = forms.CharField(required=False, strip=False, max_length=1000, label="Words or pattern")
    reason = forms.CharField(required=False)
    regex = forms.BooleanField(required=False, label="Regular expression")


class ReasonCodeForm(forms.Form):
    """Redact a page's improper boxes for real, with the reason code of the redactions."""

    reason = forms.CharField(required=False)


class LogEntryForm(forms.Form):
    """One row of a production's privilege log: which (``entry``, its id) and its editable fields as typed
    (:data:`matters.privilege.log.EDITABLE`; the service trims them to their columns and refuses what the
    production must not disclose)."""

    entry = forms.IntegerField(error_messages={"required": "Which row of the log?", "invalid": "Which row of the log?"})

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in EDITABLE:
            self.fields[name] = forms.CharField(required=False, strip=False,
                                                widget=forms.Textarea if name == "description" else None)

    def values(self) -> dict[str, str]:
        return {name: self.cleaned_data[name] for name in EDITABLE}

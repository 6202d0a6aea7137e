"""The forms of a received production: its upload (the files and who produced them) and the confirmation of
how the load file's columns map to the fields LawDesk reads. What the files hold is judged by
:func:`matters.incoming.services.incoming_receive`, whose refusals go on the field at fault."""

from django import forms

from matters.models import Origin

from .loadfiles import FIELD_ALIASES
from .services import INCOMING_ORIGINS

CANONICAL_FIELDS = list(FIELD_ALIASES)


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFiles(forms.FileField):
    """Every file of a multiple file input (Django's own recipe: ``FileField`` cleans one)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None) -> list:
        if isinstance(data, (list, tuple)):
            if not data:
                return [super().clean(None, initial)]
            return [super(MultipleFiles, self).clean(item, initial) for item in data]
        return [super().clean(data, initial)]


class IncomingUploadForm(forms.Form):
    """The files of a production received (a ZIP volume, its PDFs) and who produced it: the opposing party or a
    third party (``INCOMING_ORIGINS``; the service refuses any other)."""

    files = MultipleFiles(allow_empty_file=True,
                          error_messages={"required": "Choose the production's files (a ZIP volume or PDFs)."})
    origin = forms.ChoiceField(
        choices=[(o, Origin(o).label) for o in INCOMING_ORIGINS],
        error_messages={"required": "Say who produced it: the opposing party or a third party.",
                        "invalid_choice": "Say who produced it: the opposing party or a third party."})


class IncomingMappingForm(forms.Form):
    """Which column of the load file (``header``) holds each field LawDesk reads (:data:`CANONICAL_FIELDS`);
    a field left at "(none)" is not read. A column the load file does not have is refused, not dropped."""

    def __init__(self, *args, header: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        choices = [("", "(none)"), *((name, name) for name in header)]
        for field in CANONICAL_FIELDS:
            self.fields[field] = forms.ChoiceField(
                choices=choices, required=False, label=field,
                error_messages={"invalid_choice": f"{field}: the load file has no column %(value)s; choose one of "
                                                  "its columns or (none)."})

    def field_map(self) -> dict[str, str]:
        """``{field: column}`` of the fields given a column."""
        return {field: column for field, column in self.cleaned_data.items() if column}

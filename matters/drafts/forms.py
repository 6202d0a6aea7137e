"""Forms of the draft pages that take more than a line of text."""

from django import forms

from .exports import EXPORT_KINDS

# A brief with its footnotes is a few hundred kilobytes as DOCX; pictures pasted in make a few megabytes.
WORD_MAX_BYTES = 100 * 1024 * 1024


class WordVersionForm(forms.Form):
    """The DOCX an attorney edited in Word, uploaded as the next version (``file``). What the file holds is
    judged by :func:`matters.drafts.services.draft_version_from_word`, whose refusals go on the field."""

    file = forms.FileField(label="Word file (DOCX)", allow_empty_file=True,
                           error_messages={"required": "Choose the Word file (DOCX) to upload."})

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > WORD_MAX_BYTES:
            raise forms.ValidationError(
                f"“{upload.name}” is {upload.size / 2 ** 20:.0f} MB; a draft's Word file is at most "
                f"{WORD_MAX_BYTES // 2 ** 20} MB. Remove pasted pictures or embedded files in Word and try again.")
        return upload


class DraftEditForm(forms.Form):
    """The edited text of a version. Browsers send a textarea's line breaks as CRLF; the draft's offsets count
    one character per break, so they are made ``\n`` here. Emptiness is the service's to judge."""

    text = forms.CharField(required=False, strip=False, widget=forms.Textarea)

    def clean_text(self) -> str:
        return self.cleaned_data["text"].replace("\r\n", "\n").replace("\r", "\n")


class DraftRenameForm(forms.Form):
    """A draft's new ``title`` (judged by :func:`matters.drafts.services.draft_rename`), and the ``number`` of the
    version the page was on, to go back to."""

    title = forms.CharField(required=False, max_length=1000)
    number = forms.IntegerField(required=False, min_value=1)


class DraftApproveForm(forms.Form):
    """Approve a version: ``read_confirmed`` (the attorney has read it whole) and, where the service asks for
    one, ``override_reason`` (:func:`matters.drafts.services.draft_approve` judges both)."""

    override_reason = forms.CharField(required=False, strip=False, max_length=2000)
    read_confirmed = forms.BooleanField(required=False)


class DraftExportForm(forms.Form):
    """Export a version as ``kind`` (the URL names it; the form is bound to it so an unknown one is refused here
    as everywhere else)."""

    kind = forms.ChoiceField(choices=[(kind, label) for kind, (label, *_rest) in EXPORT_KINDS.items()],
                             error_messages={"invalid_choice": "Unknown export %(value)r: choose DOCX, PDF or the "
                                                               "verification report."})

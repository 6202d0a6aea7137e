"""Forms of the draft pages that take more than a line of text."""

from django import forms

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

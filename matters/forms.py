from django import forms
from django.contrib.auth import get_user_model

from .models import UPLOAD_ORIGINS, Matter, Origin


class MatterForm(forms.ModelForm):
    class Meta:
        model = Matter
        fields = ["name", "court", "case_number", "client", "opposing_party", "label_style", "bates_prefix"]


class UploadForm(forms.Form):
    """One file per request (the page sends each file separately, so each has its own progress bar)."""

    file = forms.FileField(allow_empty_file=True)
    origin = forms.ChoiceField(choices=[(o.value, o.label) for o in map(Origin, UPLOAD_ORIGINS)])
    custodian = forms.CharField(max_length=200, required=False,
                                help_text="who the file was collected from; blank for nobody")


class ExhibitEditForm(forms.Form):
    label = forms.CharField(max_length=40)
    title = forms.CharField(max_length=300)
    transcript_cite = forms.CharField(
        max_length=60, required=False, label="Cited as (transcript)",
        help_text="For a deposition or hearing transcript: the short form a brief cites it by, e.g. Roe Dep.")


class CitesAsForm(forms.Form):
    cites_as = forms.CharField(label="Cites as", max_length=300, required=False,
                               help_text="How drafts cite this exhibit: an authority's own citation, a docket "
                                         "entry (ECF No. 45-2) or a record document's short name (Compl.).")


class ButtonForm(forms.Form):
    """A button that sends nothing but its CSRF token (reprocess, cancel, retry, remove a box, probe): every POST
    goes through a form, so a door with no field has one too, and the service's refusal lands on it
    (:func:`matters.validation.form_submit`)."""


class ReasonForm(forms.Form):
    """A decision recorded with its reason (count a marked file as evidence, clear a prompt-injection flag,
    confirm an improper redaction, let a job continue). Whether the reason says enough is the service's to judge
    (:func:`matters.validation.clean_reason` and the like): the field takes it as typed."""

    reason = forms.CharField(required=False, strip=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2}))


class PasswordForm(forms.Form):
    password = forms.CharField(widget=forms.PasswordInput, strip=False, max_length=1000)


class SearchForm(forms.Form):
    q = forms.CharField(max_length=500, required=False)


class ExhibitListForm(forms.Form):
    """Which files the matter page lists (``?review=``): all of them, or only the inclusive messages of every
    thread with their attachments (:mod:`matters.email.inclusive`), the messages a reviewer must read to have
    read every thread."""

    review = forms.ChoiceField(choices=[("", "All files"), ("inclusive", "Inclusive messages only")],
                               required=False, label="Show")



class MemberForm(forms.Form):
    """One account of the office, by its user name: to add to a matter's members or take off them (the service
    checks who may, and that the change leaves the matter an attorney)."""

    user = forms.ModelChoiceField(
        queryset=get_user_model().objects.filter(is_active=True), to_field_name="username", label="User name",
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
        error_messages={"invalid_choice": "There is no active account with that user name.",
                        "required": "Give the user name of the account."},
    )

"""The forms of the matter page's retention section. What a reason or a typed name must be is the services'
to judge (:mod:`matters.retention.services`, :mod:`matters.retention.purge`): they say so in their refusals."""

from django import forms


class HoldForm(forms.Form):
    """Put the matter on legal hold (``action=hold``) or lift the hold (``lift``), with the reason."""

    action = forms.ChoiceField(choices=[("hold", "Put on legal hold"), ("lift", "Lift the hold")], initial="hold",
                               error_messages={"invalid_choice": "Choose to put the matter on hold or to lift it."})
    reason = forms.CharField(required=False, strip=False)


class PurgeForm(forms.Form):
    """Purge the matter: its name typed again, as it is written."""

    confirm_name = forms.CharField(required=False, strip=False)

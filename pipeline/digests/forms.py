"""The form behind the digest buttons (the matter's digest page and an exhibit's page)."""

from django import forms


class DigestRequestForm(forms.Form):
    """``again``: also make again the digests that failed (a done digest is never made again: the cache)."""

    again = forms.BooleanField(required=False, label="Also try again the digests that failed")

"""The New production form: the Bates settings, and for each candidate exhibit whether it is included, its
order, its confidentiality designation and, for an attorney, whether it is withheld and why.

The per-exhibit fields are named by the exhibit's id (``include-<id>``, ``order-<id>``, ``confidentiality-<id>``,
``custom-<id>``, ``withhold-<id>``, ``withhold-basis-<id>``, ``withhold-description-<id>``), not by a position in
a formset: an exhibit that became ready between the page's load and its submission cannot take over another
exhibit's withholding. What the production may be is judged by
:func:`matters.productions.reservation.production_create`, whose refusals the view puts on this form; a refused
form is shown again with everything the attorney entered.
"""

from django import forms

from matters.models import Exhibit, PrivilegeBasis, Production

from .reservation import AEO, CONFIDENTIAL

DESIGNATIONS = [("", "None"), (CONFIDENTIAL, CONFIDENTIAL), (AEO, AEO), ("custom", "Custom text")]
CUSTOM_CHARS = 120


class ProductionForm(forms.Form):
    prefix = forms.CharField(label="Bates prefix", max_length=30)
    digits = forms.IntegerField(min_value=6, max_value=15, initial=6,
                                error_messages={"invalid": "Digits must be a whole number from 6 to 15."})
    start = forms.IntegerField(min_value=1, required=False,
                               error_messages={"invalid": "The start number must be a whole number."})
    suffix = forms.CharField(required=False, max_length=30)
    position = forms.ChoiceField(choices=Production.Position.choices, initial=Production.Position.BOTTOM_RIGHT)
    cover_sheets = forms.ChoiceField(choices=Production.CoverSheets.choices, initial=Production.CoverSheets.NONE)
    with_index = forms.BooleanField(required=False, initial=True)
    with_images = forms.BooleanField(required=False)
    keep_forms = forms.BooleanField(required=False)

    def __init__(self, *args, candidates: list[Exhibit], **kwargs):
        super().__init__(*args, **kwargs)
        self.candidates = candidates
        for number, exhibit in enumerate(candidates, 1):
            pk = exhibit.pk
            self.fields[f"include-{pk}"] = forms.BooleanField(required=False, initial=True)
            self.fields[f"order-{pk}"] = forms.IntegerField(
                min_value=1, required=False, initial=number,
                error_messages={"invalid": f"The order of {exhibit.display_label} must be a whole number."})
            self.fields[f"confidentiality-{pk}"] = forms.ChoiceField(choices=DESIGNATIONS, required=False)
            self.fields[f"custom-{pk}"] = forms.CharField(required=False, max_length=CUSTOM_CHARS)
            # Parsed for everyone: a withholding sent by someone who may not withhold is refused by the service,
            # never dropped without a word (the page shows these fields to attorneys only).
            self.fields[f"withhold-{pk}"] = forms.ChoiceField(
                choices=[("", "Produce"), *PrivilegeBasis.choices], required=False)
            self.fields[f"withhold-basis-{pk}"] = forms.CharField(required=False, max_length=120)
            self.fields[f"withhold-description-{pk}"] = forms.CharField(required=False, max_length=1000)

    def rows(self) -> list[dict]:
        """One row per candidate exhibit for the template: the exhibit and its fields' values as entered (or
        their initial values), with their errors."""
        rows = []
        for exhibit in self.candidates:
            pk = exhibit.pk
            row = {"exhibit": exhibit, "errors": []}
            for key in ("include", "order", "confidentiality", "custom", "withhold", "withhold-basis",
                        "withhold-description"):
                name = f"{key}-{pk}"
                row[key.replace("-", "_")] = self[name].value()
                row["errors"].extend(self.errors.get(name, []) if self.is_bound else [])
            rows.append(row)
        return rows

    def production_arguments(self) -> dict:
        """The keyword arguments of :func:`production_create` from the cleaned data: the included exhibits in
        the order given (ties in the page's order), their designations and withholdings."""
        data = self.cleaned_data
        chosen = [(data.get(f"order-{e.pk}") or 0, number, e) for number, e in enumerate(self.candidates)
                  if data.get(f"include-{e.pk}")]
        chosen.sort(key=lambda item: item[:2])
        exhibits = [e for _, _, e in chosen]
        designations = {}
        for exhibit in exhibits:
            value = data.get(f"confidentiality-{exhibit.pk}", "")
            if value == "custom":
                value = (data.get(f"custom-{exhibit.pk}") or "").strip()[:CUSTOM_CHARS]
            designations[exhibit.pk] = value
        withheld = {
            exhibit.pk: {"basis": data[f"withhold-{exhibit.pk}"],
                         "basis_text": data.get(f"withhold-basis-{exhibit.pk}", ""),
                         "description": data.get(f"withhold-description-{exhibit.pk}", "")}
            for exhibit in exhibits if data.get(f"withhold-{exhibit.pk}")
        }
        return {
            "exhibits": exhibits, "prefix": data["prefix"], "digits": data["digits"], "start": data.get("start"),
            "suffix": data.get("suffix", ""), "position": data["position"], "cover_sheets": data["cover_sheets"],
            "with_index": data["with_index"], "with_images": data["with_images"], "keep_forms": data["keep_forms"],
            "confidentiality": designations, "withheld": withheld,
        }


class ServeForm(forms.Form):
    """Record a finished production as served: on whom (``served_to``; the service asks for it and checks who
    may serve, :func:`matters.productions.delivery.production_serve`)."""

    served_to = forms.CharField(required=False, max_length=2000, label="Served on")

"""Every change made through the Django admin goes into an audit chain: what changed, from what, to what, by whom.

A change that touches a matter (its members, its exhibits' titles) goes into that matter's chain; users, groups,
passwords and the model topology go into the system chain. Secrets never enter the log: a password or an API key
is recorded as "set" or "cleared", never its value.
"""

from django.contrib import admin
from django.db import models

from matters.audit.services import audit_record

SECRET_FIELDS = {"password", "password1", "password2", "api_key"}
MAX_VALUE_CHARS = 300


def _shown(value) -> str | list[str]:
    """Return a value as the log shows it: a record as its name and id, a set of records as a sorted list."""
    if isinstance(value, models.Model):
        return f"{value} (#{value.pk})"
    if isinstance(value, (list, tuple, set, models.QuerySet)):
        return sorted(str(_shown(item)) for item in value)
    return "" if value is None else str(value)[:MAX_VALUE_CHARS]


def _initial(form, name: str):
    """The field's value before the change, as records where the form holds only their ids."""
    value = form.initial.get(name)
    queryset = getattr(form.fields.get(name), "queryset", None)
    if queryset is None or value in (None, "") or isinstance(value, models.Model):
        return value
    manager = queryset.model._default_manager
    if isinstance(value, (list, tuple)):
        return list(manager.filter(pk__in=[v.pk if isinstance(v, models.Model) else v for v in value]))
    return manager.filter(pk=value).first()


def form_changes(form) -> dict[str, list]:
    """Return ``{field: [old, new]}`` for each field the form changed; secret fields as "set" / "cleared"."""
    changes = {}
    for name in form.changed_data:
        if name in SECRET_FIELDS:
            changes[name] = ["", "set" if form.cleaned_data.get(name) else "cleared"]
            continue
        old, new = _shown(_initial(form, name)), _shown(form.cleaned_data.get(name))
        if old != new:
            changes[name] = [old, new]
    return changes


def formset_changes(formsets) -> list[dict]:
    """The inline rows added, changed and deleted in one admin save."""
    rows = []
    for formset in formsets:
        label = formset.model._meta.label_lower
        deleted = set(getattr(formset, "deleted_forms", []))
        for form in formset.forms:
            if form in deleted and form.instance.pk is not None:
                rows.append({"model": label, "deleted": _shown(form.instance)})
            elif form not in deleted and form.has_changed():
                rows.append({"model": label, "object": _shown(form.instance), "changes": form_changes(form)})
    return rows


class AuditedAdmin(admin.ModelAdmin):
    """A ModelAdmin whose adds, changes and deletions are audit entries (action ``<audit_prefix>.add``,
    ``.change``, ``.delete``). Override :meth:`audit_matter` to put an object's entries in its matter's chain."""

    audit_prefix = "admin"

    def audit_matter(self, obj):
        """The matter whose chain records changes to ``obj``; None for the system chain."""
        return None

    def audit_extra(self, request, obj, form, change) -> dict:
        """More detail for the entry (a subclass adds what its save_model did besides saving the form)."""
        return {}

    def audit(self, request, *, action: str, obj, detail: dict) -> None:
        audit_record(action=f"{self.audit_prefix}.{action}", actor=request.user, matter=self.audit_matter(obj),
                     obj=obj, detail={"model": obj._meta.label_lower, "object": _shown(obj), "via": "admin",
                                      **detail})

    def save_related(self, request, form, formsets, change) -> None:
        super().save_related(request, form, formsets, change)
        detail = {"changes": form_changes(form)}
        if inlines := formset_changes(formsets):
            detail["inlines"] = inlines
        detail.update(self.audit_extra(request, form.instance, form, change))
        if change and not detail["changes"] and len(detail) == 1:
            return  # saved without changing anything
        self.audit(request, action="change" if change else "add", obj=form.instance, detail=detail)

    def delete_model(self, request, obj) -> None:
        self.audit(request, action="delete", obj=obj, detail={})
        super().delete_model(request, obj)

    def delete_queryset(self, request, queryset) -> None:
        for obj in queryset:
            self.audit(request, action="delete", obj=obj, detail={})
        super().delete_queryset(request, queryset)

"""Django admin for the case file: it shows each viewer only the matters they are a member of (ethical walls).

The admin is for topology and users; matters and exhibits appear here read-mostly, and never to non-members.
Audit entries are read-only. Every change made here is audited (:mod:`matters.audit.admin`): a matter's members
and exhibits in the matter's chain; users, groups and passwords in the system chain, a password set by someone
for another user recorded as a reset, with whether that someone is a superuser.
"""

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from matters.audit.admin import AuditedAdmin
from matters.audit.services import audit_record

from .models import AuditEntry, CourtClosedDay, Exhibit, Matter
from .selectors import matters_for_user


@admin.register(CourtClosedDay)
class CourtClosedDayAdmin(AuditedAdmin):
    """The days the office enters as not days to file (a court's closure order, a declared holiday), for every
    matter's deadlines counted from then on (Fed. R. Civ. P. 6(a)(3), 6(a)(6)(B)); deadlines saved before keep
    their counting."""

    list_display = ["day", "kind", "reason"]
    list_filter = ["kind"]


@admin.register(Matter)
class MatterAdmin(AuditedAdmin):
    list_display = ["name", "court", "case_number", "status", "created_at"]
    list_filter = ["status"]
    search_fields = ["name", "case_number", "client"]
    filter_horizontal = ["members"]
    # The hold changes only on the matter's hold panel (matters.retention.services: attorney, reason, audit);
    # a matter is purged only by the purge.
    readonly_fields = ["legal_hold", "purged_at"]

    def get_queryset(self, request):
        return matters_for_user(request.user)

    def audit_matter(self, obj):
        return obj if obj.pk else None

    def has_delete_permission(self, request, obj=None) -> bool:
        # A matter leaves only by purge (matters.retention.purge), which checks the legal hold and keeps the audit
        # chain.
        return False


@admin.register(Exhibit)
class ExhibitAdmin(AuditedAdmin):
    list_display = ["display_label", "title", "matter", "origin", "status", "page_count"]
    list_filter = ["status", "origin"]
    readonly_fields = [f.name for f in Exhibit._meta.fields if f.name not in ("title", "label")]

    def get_queryset(self, request):
        return super().get_queryset(request).filter(matter__in=matters_for_user(request.user))

    def audit_matter(self, obj):
        return obj.matter

    def has_add_permission(self, request) -> bool:
        return False  # exhibits arrive through upload, which stores and hashes the original

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    list_display = ["chain", "seq", "at", "actor", "action", "object_type", "object_id"]
    list_filter = ["action"]

    def get_queryset(self, request):
        entries = super().get_queryset(request)
        return entries.filter(matter__in=matters_for_user(request.user)) | entries.filter(matter__isnull=True)

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


admin.site.unregister(get_user_model())
admin.site.unregister(Group)


@admin.register(get_user_model())
class AuditedUserAdmin(AuditedAdmin, UserAdmin):
    """Users, their roles (groups) and passwords, every change in the system chain."""

    def user_change_password(self, request, id, form_url=""):
        request.lawdesk_password_form = True
        return super().user_change_password(request, id, form_url)

    def log_change(self, request, obj, message):
        # The admin's password form saves outside save_model/save_related; this is the one hook it calls.
        if getattr(request, "lawdesk_password_form", False):
            password_audit(request, user=obj)
        return super().log_change(request, obj, message)


@admin.register(Group)
class AuditedGroupAdmin(AuditedAdmin, GroupAdmin):
    """Roles (groups) and the permissions they hold, every change in the system chain."""


def password_audit(request, *, user) -> None:
    """Record a password set through the admin: ``admin.password_reset`` when set for someone else (with whether
    the one who did it is a superuser), ``admin.password_change`` for one's own. Never the password itself."""
    own = user.pk == request.user.pk
    audit_record(action="admin.password_change" if own else "admin.password_reset", actor=request.user, obj=user,
                 detail={"user": user.get_username(), "by": request.user.get_username(),
                         "by_superuser": request.user.is_superuser, "password": "set", "via": "admin"})


def own_password_change(request: HttpRequest) -> HttpResponse:
    """The admin's own-password form (``admin/password_change/``, with the admin's own access check), audited when
    it succeeds: the redirect to its "done" page."""
    response = admin.site.admin_view(admin.site.password_change)(request)
    if request.method == "POST" and getattr(response, "url", None) == reverse("admin:password_change_done"):
        password_audit(request, user=request.user)
    return response

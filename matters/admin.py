"""Django admin for the case file: it shows each viewer only the matters they are a member of (ethical walls).

The admin is for topology and users; matters and exhibits appear here read-mostly, and never to non-members.
Audit entries are read-only.
"""

from django.contrib import admin

from .models import AuditEntry, Exhibit, Matter
from .selectors import matters_for_user


@admin.register(Matter)
class MatterAdmin(admin.ModelAdmin):
    list_display = ["name", "court", "case_number", "status", "created_at"]
    list_filter = ["status"]
    search_fields = ["name", "case_number", "client"]
    filter_horizontal = ["members"]

    def get_queryset(self, request):
        return matters_for_user(request.user)


@admin.register(Exhibit)
class ExhibitAdmin(admin.ModelAdmin):
    list_display = ["display_label", "title", "matter", "origin", "status", "page_count"]
    list_filter = ["status", "origin"]
    readonly_fields = [f.name for f in Exhibit._meta.fields if f.name not in ("title", "label")]

    def get_queryset(self, request):
        return super().get_queryset(request).filter(matter__in=matters_for_user(request.user))

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

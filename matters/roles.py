"""The three roles of docs/glossary.md as Django groups, and the permissions each one holds."""

from django.contrib.auth.models import Group, Permission

ROLE_PERMISSIONS: dict[str, list[str]] = {
    "attorney": ["upload_exhibit", "approve_draft", "serve_production", "hold_matter"],
    "assistant": ["upload_exhibit"],
    "operator": ["manage_topology"],
}


def role_group(role: str) -> Group:
    """Return the group for ``role`` (creating it with its permissions if missing). KeyError for an unknown role."""
    codenames = ROLE_PERMISSIONS[role]
    group, created = Group.objects.get_or_create(name=role)
    if created:
        group.permissions.set(Permission.objects.filter(content_type__app_label="matters", codename__in=codenames))
    return group

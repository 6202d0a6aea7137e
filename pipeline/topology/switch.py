"""Moving the model roles between the example deployment and the embedded default, saying what moved.

``topology_load_example`` moves every role to servers on hosts that may not exist here; after it, jobs wait on
those hosts and ``make run`` no longer starts the embedded model (it starts only while no other server is
enabled). These functions report every role that changed hands, and :func:`topology_use_embedded` is the way
back.
"""

from django.db import transaction

from pipeline.models import RETRIEVAL_ROLES, ModelServer, Role, RoleAssignment
from pipeline.servers import EMBEDDED_EMBEDDER_NAME, EMBEDDED_NAME


def role_holders() -> dict[str, str]:
    """Return ``{role: server name}`` for every role that has a server."""
    return dict(RoleAssignment.objects.values_list("role", "server__name"))


def role_changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Return one line per role whose server changed, in the glossary's role order, e.g.
    ``"drafter: embedded -> drafter"`` (``(none)`` where a role had no server)."""
    return [f"{role}: {before.get(role, '(none)')} -> {after.get(role, '(none)')}"
            for role in Role.values if before.get(role) != after.get(role)]


def topology_use_embedded() -> dict[str, list[str]]:
    """Disable every enabled server other than the embedded one and give the embedded records every role
    (the embedder role to the embedded embedder).

    Nothing is deleted: the other servers stay in the admin, disabled, and can be enabled again there. Return
    ``{"disabled": [server names], "roles": [role_changes lines]}``. When the embedded server has no record yet
    (``make run`` has never started it), roles are left as they are; the next ``make run`` starts the embedded
    model, since no other server is enabled, and gives it every role.
    """
    before = role_holders()
    with transaction.atomic():
        others = ModelServer.objects.filter(enabled=True, embedded=False)
        disabled = list(others.order_by("name").values_list("name", flat=True))
        others.update(enabled=False)
        embedded = ModelServer.objects.filter(name=EMBEDDED_NAME).first() or ModelServer.objects.filter(
            embedded=True).exclude(name=EMBEDDED_EMBEDDER_NAME).first()
        embedder = ModelServer.objects.filter(name=EMBEDDED_EMBEDDER_NAME).first()
        for server, roles in ((embedded, [r for r in Role if r not in RETRIEVAL_ROLES]),
                              (embedder, [Role.EMBEDDER])):
            if server is None:
                continue
            if not server.enabled:
                ModelServer.objects.filter(pk=server.pk).update(enabled=True)
            for role in roles:
                RoleAssignment.objects.update_or_create(role=role, defaults={"server": server})
        if embedder is None:
            # No embedded embedder was ever started: the embedder role is nobody's until make run starts one.
            RoleAssignment.objects.filter(role__in=RETRIEVAL_ROLES).exclude(server__embedded=True).delete()
    return {"disabled": disabled, "roles": role_changes(before, role_holders())}

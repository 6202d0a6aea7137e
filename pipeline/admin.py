"""Django admin for the model topology: hosts, GPUs, boards, NVLink connections, model servers, roles and probe
history. Every rule of :mod:`pipeline.topology.rules` shows here: errors refuse the save (the forms of
:mod:`pipeline.admin_forms` check them), warnings are shown on the server's page and after saving. Actions:
"probe now" (servers) and "discover GPUs" (hosts).

Users holding the ``manage_topology`` permission (the ``operator`` group) may change all of it; others need
Django's per-model permissions as usual. The admin itself needs staff status. Every change is an entry in the
system audit chain (``topology.add`` / ``.change`` / ``.delete``: who, what, old -> new; API keys only as "set" or
"cleared"), listed on the topology page. Where evidence may go is not the operator's to choose: LAWDESK_MODEL_HOSTS.
"""

import socket
from contextvars import ContextVar

from django.contrib import admin, messages
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from matters.audit.admin import AuditedAdmin
from matters.permissions import may

from .admin_forms import BoardForm, ModelServerForm
from .api_keys import key_clear, key_read, key_write
from .models import GPU, Board, Host, ModelServer, NVLink, ProbeResult, RoleAssignment
from .topology.discover import NvmlUnavailable, discovery_apply, nvml_read
from .topology.foresight import view_forecast
from .topology.launch import launch_line
from .topology.overview import servers_with_latest_probe
from .topology.probe import probe_summary, probe_warnings, servers_probe
from .topology.rules import WARNING, server_problems
from .topology.selectors import snapshot_load
from .topology.server_report import header_summary, server_report
from .topology.svg import STATUS_COLOURS

# The topology snapshot of the server list being rendered (set by ModelServerAdmin.changelist_view).
_LIST_SNAPSHOT: ContextVar = ContextVar("server_list_snapshot", default=None)


class TopologyAdmin(AuditedAdmin):
    """Grants the ``manage_topology`` permission every right over topology records; audits every change."""

    audit_prefix = "topology"

    def _operator(self, request) -> bool:
        return may(request.user, "manage_topology")

    def has_module_permission(self, request) -> bool:
        return self._operator(request) or super().has_module_permission(request)

    def has_view_permission(self, request, obj=None) -> bool:
        return self._operator(request) or super().has_view_permission(request, obj)

    def has_add_permission(self, request) -> bool:
        return self._operator(request) or super().has_add_permission(request)

    def has_change_permission(self, request, obj=None) -> bool:
        return self._operator(request) or super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None) -> bool:
        return self._operator(request) or super().has_delete_permission(request, obj)


class TopologyInline:
    def has_view_permission(self, request, obj=None) -> bool:
        return may(request.user, "manage_topology") or super().has_view_permission(request, obj)

    def has_add_permission(self, request, obj=None) -> bool:
        return may(request.user, "manage_topology") or super().has_add_permission(request, obj)

    def has_change_permission(self, request, obj=None) -> bool:
        return may(request.user, "manage_topology") or super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None) -> bool:
        return may(request.user, "manage_topology") or super().has_delete_permission(request, obj)


class GPUInline(TopologyInline, admin.TabularInline):
    model = GPU
    extra = 0
    fields = ["index", "name", "memory_total_mib", "compute_capability", "uuid", "pci_bus_id"]


class BoardInline(TopologyInline, admin.TabularInline):
    model = Board
    extra = 0
    fields = ["name", "kind"]
    show_change_link = True


@admin.register(Host)
class HostAdmin(TopologyAdmin):
    list_display = ["name", "address", "gpu_count", "board_count"]
    search_fields = ["name", "address"]
    inlines = [GPUInline, BoardInline]
    actions = ["discover_here"]

    @admin.display(description="GPUs")
    def gpu_count(self, host) -> int:
        return host.gpus.count()

    @admin.display(description="boards")
    def board_count(self, host) -> int:
        return host.boards.count()

    @admin.action(description="Discover GPUs and NVLink of this machine (NVML) into the selected host")
    def discover_here(self, request, queryset) -> None:
        if queryset.count() != 1:
            self.message_user(request, "Choose exactly one host: the one this LawDesk runs on.", messages.ERROR)
            return
        host = queryset.get()
        try:
            found = nvml_read()
        except NvmlUnavailable as error:
            self.message_user(request, f"{error} Nothing was changed.", messages.ERROR)
            return
        report = discovery_apply(host_name=host.name, found=found, actor=request.user)
        self.message_user(request, f"Discovery on {socket.gethostname()} into {host.name}: "
                                   f"{len(found.gpus)} GPU(s), {report.boards_created} board(s) proposed.")
        for line in report.lines:
            self.message_user(request, line, messages.INFO)


@admin.register(GPU)
class GPUAdmin(TopologyAdmin):
    list_display = ["__str__", "name", "memory_total_mib", "compute_capability", "board_names", "uuid"]
    list_filter = ["host", "boards", "name"]
    search_fields = ["uuid", "pci_bus_id", "name"]

    @admin.display(description="board")
    def board_names(self, gpu) -> str:
        return ", ".join(board.name for board in gpu.boards.all())

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("host").prefetch_related("boards")


@admin.register(Board)
class BoardAdmin(TopologyAdmin):
    form = BoardForm
    list_display = ["name", "host", "kind", "gpu_list", "server_list"]
    list_filter = ["host", "kind"]
    filter_horizontal = ["gpus"]

    @admin.display(description="GPUs")
    def gpu_list(self, board) -> str:
        return ", ".join(str(gpu.index) for gpu in board.gpus.all())

    @admin.display(description="servers")
    def server_list(self, board) -> str:
        return ", ".join(sorted({server.name for gpu in board.gpus.all() for server in gpu.servers.all()}))

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("host").prefetch_related("gpus__servers")


@admin.register(NVLink)
class NVLinkAdmin(TopologyAdmin):
    list_display = ["__str__", "links"]
    list_filter = ["gpu_a__host"]


class RoleInline(TopologyInline, admin.TabularInline):
    model = RoleAssignment
    extra = 0


def _status_badge(status: str | None) -> str:
    if not status:
        return mark_safe('<span style="color:#757575">not probed</span>')
    return format_html('<strong style="color:{}">{}</strong>', STATUS_COLOURS.get(status, "#757575"), status)


@admin.register(ModelServer)
class ModelServerAdmin(TopologyAdmin):
    form = ModelServerForm
    inlines = [RoleInline]
    list_display = ["name", "host", "backend", "board_names", "role_list", "status", "decode", "forecast_column",
                    "enabled", "in_service"]
    list_filter = ["host", "backend", "enabled", ("gpus__boards", admin.RelatedOnlyFieldListFilter), "roles__role"]
    search_fields = ["name", "model_name", "base_url"]
    filter_horizontal = ["gpus"]
    readonly_fields = ["api_key_status", "out_of_service_reason", "evidence_destination", "launch", "rules", "header",
                       "forecast"]
    actions = ["probe_now"]
    fieldsets = [
        (None, {"fields": ["name", "host", "backend", "base_url", "evidence_destination", "model_name", "model_path",
                           "enabled", "out_of_service_reason"]}),
        ("Serving", {"fields": ["quantization", "kv_cache_type", "flash_attention", "context_tokens",
                                "parallel_slots", "gpu_layers", "extra_args", "gpus", "decode_floor_tok_s",
                                "sampling"]}),
        ("GGUF header, forecast and memory", {"fields": ["gguf_header_file", "header", "forecast",
                                                         "enable_despite_forecast"]}),
        ("API key", {"fields": ["api_key_status", "api_key", "clear_api_key"]}),
        ("Launch and rules", {"fields": ["launch", "rules"]}),
    ]

    def get_queryset(self, request):
        return servers_with_latest_probe().select_related("host").prefetch_related("gpus__boards", "roles")

    @admin.display(description="board")
    def board_names(self, server) -> str:
        return ", ".join(sorted({board.name for gpu in server.gpus.all() for board in gpu.boards.all()}))

    @admin.display(description="roles")
    def role_list(self, server) -> str:
        return ", ".join(sorted(assignment.role for assignment in server.roles.all()))

    @admin.display(description="status", ordering="probe_status")
    def status(self, server) -> str:
        return _status_badge(getattr(server, "probe_status", None))

    @admin.display(description="in service", boolean=True)
    def in_service(self, server) -> bool:
        return not server.out_of_service_reason

    @admin.display(description="decode tok/s")
    def decode(self, server) -> str:
        value = getattr(server, "probe_decode_tok_s", None)
        return f"{value:.1f}" if value is not None else "-"

    def changelist_view(self, request, extra_context=None):
        # One topology snapshot for the whole list, not one per row.
        token = _LIST_SNAPSHOT.set(snapshot_load())
        try:
            return super().changelist_view(request, extra_context)
        finally:
            _LIST_SNAPSHOT.reset(token)

    @admin.display(description="forecast / ceiling tok/s")
    def forecast_column(self, server) -> str:
        snapshot = _LIST_SNAPSHOT.get() or snapshot_load()
        view = next((v for v in snapshot.servers if v.id == server.pk), None)
        result = view_forecast(snapshot, view).forecast if view else None
        return f"{result.forecast_tok_s:.1f} / {result.ceiling_tok_s:.1f}" if result else "-"

    @admin.display(description="GGUF header")
    def header(self, server) -> str:
        return header_summary(server.gguf_header)

    @admin.display(description="forecast")
    def forecast(self, server) -> str:
        if not server.pk:
            return "-"
        lines = ((line,) for line in server_report(server))
        return format_html("<ul>{}</ul>", format_html_join("", "<li>{}</li>", lines))

    @admin.display(description="API key")
    def api_key_status(self, server) -> str:
        if server.pk and key_read(server):
            return f"set (stored outside the database; launch lines read it from ${server.api_key_env})"
        return "not set"

    @admin.display(description="evidence may be sent here")
    def evidence_destination(self, server) -> str:
        if not server.pk:
            return "-"
        return server.address_refusal() or "yes: the address is in LAWDESK_MODEL_HOSTS"

    @admin.display(description="launch line")
    def launch(self, server) -> str:
        line = launch_line(server) if server.pk else ""
        return format_html("<code>{}</code>", line) if line else "-"

    @admin.display(description="rules")
    def rules(self, server) -> str:
        if not server.pk:
            return "-"
        found = server_problems(server, [gpu.pk for gpu in server.gpus.all()], snapshot_load())
        if not found:
            return "no rule broken"
        return format_html("<ul>{}</ul>", format_html_join(
            "", "<li><strong>{}</strong>: {} <em>(source: {})</em></li>",
            ((p.level, p.message, p.source) for p in found),
        ))

    def save_model(self, request, obj, form, change) -> None:
        super().save_model(request, obj, form, change)  # a new address or backend clears the key (models.py)
        obj.key_action = ""
        if form.cleaned_data.get("clear_api_key"):
            key_clear(obj)
            obj.key_action = "cleared"
        elif form.cleaned_data.get("api_key"):
            key_write(server=obj, key=form.cleaned_data["api_key"])
            obj.key_action = "set"
        if obj.routing_change:
            self.message_user(request, obj.out_of_service_reason, messages.WARNING)
        if refusal := obj.address_refusal():
            self.message_user(request, refusal, messages.ERROR)

    def audit_extra(self, request, obj, form, change) -> dict:
        extra = {}
        if getattr(obj, "routing_change", None):
            extra["api_key"] = "cleared (address or backend changed)"
            extra["out_of_service"] = obj.out_of_service_reason
        if getattr(obj, "key_action", ""):
            extra["api_key"] = (obj.key_action if "api_key" not in extra
                                else f"{extra['api_key']}, then {obj.key_action}")
        return extra

    def save_related(self, request, form, formsets, change) -> None:
        super().save_related(request, form, formsets, change)
        server = form.instance
        for problem in server_problems(server, [gpu.pk for gpu in server.gpus.all()], snapshot_load()):
            if problem.level == WARNING:
                self.message_user(request, f"Warning: {problem.message} (source: {problem.source})",
                                  messages.WARNING)

    @admin.action(description="Probe now (health and a short generation)")
    def probe_now(self, request, queryset) -> None:
        for result in servers_probe(server_ids=list(queryset.values_list("pk", flat=True))):
            level = messages.SUCCESS if result.status == "up" and not probe_warnings(result) else messages.WARNING
            self.message_user(request, probe_summary(result), level)


@admin.register(RoleAssignment)
class RoleAssignmentAdmin(TopologyAdmin):
    list_display = ["role", "server"]
    list_filter = ["role", "server__host", ("server__gpus__boards", admin.RelatedOnlyFieldListFilter)]


@admin.register(ProbeResult)
class ProbeResultAdmin(TopologyAdmin):
    list_display = ["server", "at", "status_badge", "decode_tok_s", "prompt_tok_s", "skipped", "error"]
    list_filter = ["status", "skipped", "server", "server__host"]
    date_hierarchy = "at"

    @admin.display(description="status", ordering="status")
    def status_badge(self, result) -> str:
        return _status_badge(result.status)

    def has_add_permission(self, request) -> bool:
        return False  # probes come from measuring, never from typing

    def has_change_permission(self, request, obj=None) -> bool:
        return False

"""The topology page, for staff and operators (the ``manage_topology`` permission). It shows hosts, boards,
GPUs, servers and roles, never matter content. Thin: parse, call a service, render."""

import socket

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from matters.forms import ButtonForm
from matters.permissions import may
from matters.validation import form_error_messages, form_submit

from .forms import DiscoverForm
from .topology.discover import NvmlUnavailable, discovery_apply, nvml_read
from .topology.overview import topology_changes, topology_overview
from .topology.probe import probe_summary, probe_warnings, servers_probe
from .topology.rules import RULES, counts
from .topology.svg import speed_chart_svg, topology_svg


def can_see_topology(user) -> bool:
    """Staff, and operators, may see and act on the topology (``see_topology`` in :mod:`matters.permissions`)."""
    return may(user, "see_topology")


def _require_topology(request: HttpRequest) -> None:
    if not can_see_topology(request.user):
        raise PermissionDenied("The topology is for staff and operators.")


@require_GET
def topology(request: HttpRequest) -> HttpResponse:
    _require_topology(request)
    overview = topology_overview()
    for row in overview["servers"]:
        row.chart = speed_chart_svg(row.history, floor_tok_s=row.server.decode_floor)
    return render(request, "pipeline/topology.html", {
        **overview,
        "picture": topology_svg(overview["hosts"]),
        "counts": counts(overview["problems"]),
        "rules": RULES,
        "this_machine": socket.gethostname(),
        "changes": topology_changes(),
    })


@require_POST
def topology_probe(request: HttpRequest) -> HttpResponse:
    _require_topology(request)
    form = ButtonForm(request.POST)
    results = form_submit(form, lambda _: servers_probe())
    if results is None:
        messages.error(request, " ".join(form_error_messages(form)))
        return redirect(reverse("pipeline:topology"))
    if not results:
        messages.info(request, "No enabled server to probe.")
    for result in results:
        level = messages.SUCCESS if result.status == "up" and not probe_warnings(result) else messages.WARNING
        messages.add_message(request, level, probe_summary(result))
    return redirect(reverse("pipeline:topology"))


@require_POST
def topology_discover(request: HttpRequest) -> HttpResponse:
    _require_topology(request)
    form = DiscoverForm(request.POST)
    if not form.is_valid():
        messages.error(request, " ".join(form_error_messages(form)) + " Nothing was changed.")
        return redirect(reverse("pipeline:topology"))
    host = form.cleaned_data["host"] or socket.gethostname()
    try:
        found = nvml_read()
    except NvmlUnavailable as error:
        messages.error(request, f"{error} Nothing was changed.")
        return redirect(reverse("pipeline:topology"))
    report = discovery_apply(host_name=host, found=found, actor=request.user)
    messages.success(request, f"Discovery into host {host}: {len(found.gpus)} GPU(s), "
                              f"{report.boards_created} board(s) proposed.")
    for line in report.lines:
        messages.info(request, line)
    return redirect(reverse("pipeline:topology"))

"""A web process's one-time costs, paid before it serves its first request.

A process imports a view's module, and compiles a template, the first time a request needs it. The URLconf names
every view, so the first request of a fresh process imported them all (eyecite's reporter tables among them) and
compiled its page's templates: measured on the load bench's matter, a fresh process's first matter page took
990 ms against 21 ms for the next, on a quiet machine. Every request that came in meanwhile waited behind it, so
the first minute after a start (fifty people opening the desk, or a restart during the day) began with a second
or more for everyone on that process. :func:`warm_up` pays it at import of the ASGI application
(:mod:`lawdesk.asgi`), which uvicorn does in each worker process before it accepts connections.
"""

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import django
from django.conf import settings
from django.forms.renderers import get_default_renderer
from django.template import TemplateSyntaxError, engines
from django.urls import get_resolver

log = logging.getLogger(__name__)
# The form renderer's templates of the widgets LawDesk's forms use, under django/forms/templates.
FORM_TEMPLATES = Path(django.__file__).parent / "forms" / "templates"


@dataclass(frozen=True)
class WarmUp:
    """What :func:`warm_up` did: the templates compiled, those that failed (each logged with its error) and the
    seconds it took."""

    templates: int
    failed: tuple[str, ...]
    seconds: float


def _template_names(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*.html"))


def warm_up() -> WarmUp:
    """Import every view (the URLconf and its namespaces, reverse tables included) and compile the project's
    templates (``settings.TEMPLATES``' ``DIRS``) and the form widgets' templates. A template that does not compile
    (bad syntax, bytes that are not UTF-8, a file that cannot be read) is logged and left for its page to report;
    the process still starts. Call it outside an event loop (:func:`warm_up_in_a_thread`)."""
    started = time.perf_counter()
    resolver = get_resolver()
    resolver.url_patterns  # noqa: B018  (imports the URLconf and with it every view module)
    resolver.reverse_dict  # noqa: B018  (a property: building it is the point)
    for _, namespace in resolver.namespace_dict.values():
        namespace.reverse_dict  # noqa: B018
    compiled, failed = 0, []
    sources = [(engines["django"].get_template, Path(folder)) for folder in settings.TEMPLATES[0]["DIRS"]]
    sources.append((get_default_renderer().get_template, FORM_TEMPLATES))
    for get_template, folder in sources:
        for name in _template_names(folder):
            try:
                get_template(name)
                compiled += 1
            except (TemplateSyntaxError, UnicodeDecodeError, OSError) as error:
                log.warning("Template %s does not compile: %s", name, error)
                failed.append(name)
    return WarmUp(templates=compiled, failed=tuple(failed), seconds=time.perf_counter() - started)


def warm_up_in_a_thread() -> WarmUp:
    """:func:`warm_up` in a thread of its own, waited for. uvicorn imports the application inside its running event
    loop, where Django refuses database queries (``SynchronousOnlyOperation``): a view module that read the
    database as it was imported would stop the server from starting."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="lawdesk-warm-up") as executor:
        return executor.submit(warm_up).result()

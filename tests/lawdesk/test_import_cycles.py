"""No module of ``matters`` or ``pipeline`` takes part in a module-level import cycle.

A cycle works or breaks depending on which of its modules happens to be imported first (a worker, a migration and
a test each start from a different one), so it is ruled out twice: statically, over the imports each module runs
when it is loaded (function bodies aside: a task imports its service there, by rule), and by loading every module
after Django's start-up in fresh interpreters, in alphabetical and in reverse order.
"""

import ast
import subprocess
import sys
from pathlib import Path

from tests.support.paths import BASE_DIR

PACKAGES = ("matters", "pipeline")


def _module_names() -> dict[str, Path]:
    """Dotted name -> file of every Python module under ``PACKAGES`` (a package by its ``__init__``)."""
    names = {}
    for package in PACKAGES:
        for path in sorted((BASE_DIR / package).rglob("*.py")):
            parts = list(path.relative_to(BASE_DIR).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            names[".".join(parts)] = path
    return names


def _load_time_imports(tree: ast.Module):
    """The import statements run when the module is loaded: module and class bodies, ``if``/``try`` blocks
    included; function bodies and ``if TYPE_CHECKING:`` blocks left out."""
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            pending.extend(node.orelse)
        elif isinstance(node, (ast.ClassDef, ast.If, ast.Try, ast.With, ast.For, ast.While)):
            for field in ("body", "orelse", "finalbody", "handlers"):
                pending.extend(getattr(node, field, []))
        elif isinstance(node, ast.ExceptHandler):
            pending.extend(node.body)


def _imported(name: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: set[str]) -> set[str]:
    """The project modules ``node`` loads: the named module, every package above it (their ``__init__`` runs
    first) and, for ``from package import module``, that module."""
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    else:
        base = name if is_package else name.rpartition(".")[0]
        for _ in range(node.level - 1):
            base = base.rpartition(".")[0]
        module = ".".join(p for p in ((base if node.level else ""), node.module or "") if p)
        targets = [module] + [f"{module}.{alias.name}" for alias in node.names]
    loaded = set()
    for target in targets:
        parts = target.split(".")
        loaded.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return {m for m in loaded if m in known and m != name and not name.startswith(m + ".")}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_level_import_cycle():
    modules = _module_names()
    known = set(modules)
    graph = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        graph[name] = set()
        for node in _load_time_imports(tree):
            graph[name] |= _imported(name, path.name == "__init__.py", node, known)
    assert _cycles(graph) == []


def test_the_cycle_check_finds_a_cycle():
    graph = {"matters.a": {"matters.b"}, "matters.b": {"matters.c"}, "matters.c": {"matters.a"}, "matters.d": set()}
    assert _cycles(graph) == [["matters.a", "matters.b", "matters.c"]]


def test_every_module_loads_whichever_is_imported_first():
    # Migrations are loaded by Django's loader, not imported by name (they start with digits, not a cycle risk).
    names = sorted(n for n in _module_names() if ".migrations." not in n and not n.endswith(".__main__"))
    script = (
        "import importlib, os, sys\n"
        "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'lawdesk.test_settings')\n"
        "import django\n"
        "django.setup()\n"
        "for name in sys.argv[1:]:\n"
        "    importlib.import_module(name)\n"
    )
    for order in (names, names[::-1]):
        done = subprocess.run([sys.executable, "-c", script, *order], cwd=BASE_DIR, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]

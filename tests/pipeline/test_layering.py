"""How the pipeline's modules depend on each other, read from their import lines: the topology rules and their
snapshot judge values and read no database; the models know nothing of the topology logic; a tasks module imports
nothing of its app at module level; the stage runner and job control build on one scheduling module, not on each
other."""

import ast
from pathlib import Path

from pipeline.stages.scheduling import MODELS_QUEUE
from pipeline.tasks import PROBES_QUEUE, probe_servers, run_stage, watch_stage

BASE_DIR = Path(__file__).resolve().parents[2]
OUR_PACKAGES = ("lawdesk", "matters", "pipeline")
ORM = ("django.db", "django.contrib.postgres", "django_tasks_db", "pipeline.models", "pipeline.job_models",
       "matters.models", "pipeline.topology.selectors")


def source_of(module: str) -> Path | None:
    """The file of one of our modules (``pipeline.topology.rules``), or None for a module of another package."""
    path = BASE_DIR.joinpath(*module.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imports_of(module: str, *, module_level_only: bool = False) -> set[str]:
    """The absolute names ``module`` imports (a ``from x import y`` counts as x and as x.y), relative imports
    resolved; with ``module_level_only``, only those outside functions and classes."""
    path = source_of(module)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text())
    nodes = tree.body if module_level_only else list(ast.walk(tree))
    found = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def reachable_from(module: str) -> set[str]:
    """``module`` and every module of ours it imports, directly or through others."""
    seen, todo = set(), [module]
    while todo:
        current = todo.pop()
        if current in seen or source_of(current) is None:
            continue
        seen.add(current)
        todo.extend(name for name in imports_of(current) if name.split(".")[0] in OUR_PACKAGES)
    return seen


def orm_imports(module: str) -> dict[str, list[str]]:
    return {reached: sorted(name for name in imports_of(reached) if name.startswith(ORM))
            for reached in reachable_from(module) if any(name.startswith(ORM) for name in imports_of(reached))}


def test_the_import_reader_sees_relative_and_absolute_imports():
    # what the checks below rely on: a relative import resolved, and an ORM import noticed where there is one
    assert "pipeline.topology.snapshot" in imports_of("pipeline.topology.rules")
    assert "pipeline.models" in imports_of("pipeline.topology.selectors")
    assert orm_imports("pipeline.topology.selectors")


def test_the_rules_and_the_snapshot_read_no_database():
    assert orm_imports("pipeline.topology.rules") == {}
    assert orm_imports("pipeline.topology.snapshot") == {}


def test_the_models_import_nothing_from_the_topology_logic():
    reached = reachable_from("pipeline.models")
    assert "pipeline.models" in reached
    assert not [name for name in reached if name.startswith("pipeline.topology")]


def test_a_tasks_module_imports_nothing_of_its_app_at_module_level():
    assert not [name for name in imports_of("pipeline.tasks", module_level_only=True)
                if name.split(".")[0] in OUR_PACKAGES]
    assert {task.queue_name for task in (run_stage, watch_stage)} == {MODELS_QUEUE}
    assert probe_servers.queue_name == PROBES_QUEUE != MODELS_QUEUE  # a probe never waits behind a stage


def test_the_runner_and_job_control_do_not_import_each_other():
    assert "pipeline.stages.control" not in imports_of("pipeline.stages.runner")
    assert "pipeline.stages.runner" not in imports_of("pipeline.stages.control")
    assert "pipeline.stages.scheduling" in imports_of("pipeline.stages.runner") & imports_of("pipeline.stages.control")

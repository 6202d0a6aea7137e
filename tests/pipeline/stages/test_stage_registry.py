"""The stage registry: one object per stage, one spec per object, and nothing else names a stage."""

import re
from pathlib import Path

import pytest

from pipeline.job_models import Job
from pipeline.stages import kinds, registry, specs
from pipeline.stages.results import StageFailed

ROOT = Path(__file__).resolve().parents[3]


def test_every_spec_has_its_stage_object_and_every_plan_runs_registered_stages():
    assert set(registry.REGISTRY) == set(specs.STAGES)
    for plan in specs.PLANS.values():
        assert all(name in registry.REGISTRY for name in plan)
    assert all(stage.spec.name == name for name, stage in registry.REGISTRY.items())


@pytest.mark.parametrize("kind", list(specs.PLANS))
def test_each_stage_is_followed_as_its_plan_says(kind):
    job = Job(kind=kind)
    plan = specs.PLANS[kind]
    assert [registry.stage_for(name).following(job) for name in plan] == [*plan[1:], None]


def test_the_router_is_followed_by_the_first_stage_of_the_kind_it_chose():
    assert registry.stage_for("router").following(Job(kind="summary")) == "summarize"


def test_a_name_no_stage_has_fails_the_stage_with_the_name():
    with pytest.raises(StageFailed, match="Unknown stage 'outline'"):
        registry.stage_for("outline")
    with pytest.raises(ValueError):
        kinds.register(type("Twice", (kinds.Stage,), {"name": "gate"}))


def test_no_module_but_the_registry_and_the_specs_names_a_stage():
    """The runner, job control, the job views and the job page ask the stage object; an if-chain over stage
    names outside the registry is the thing this registry replaced."""
    names = "|".join(specs.STAGES)
    comparison = re.compile(rf"""(==|!=|\bin)\s*\(?["'](?:{names})["']|["'](?:{names})["']\s*(==|!=)""")
    found = []
    for path in [*(ROOT / "pipeline").rglob("*.py"), *(ROOT / "templates" / "pipeline").rglob("*.html")]:
        relative = path.relative_to(ROOT).as_posix()
        if relative in ("pipeline/stages/kinds.py", "pipeline/stages/specs.py") or "/migrations/" in relative:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if comparison.search(line):
                found.append(f"{relative}:{number}: {line.strip()}")
    assert not found, "ask the stage object (pipeline.stages.kinds) instead:\n" + "\n".join(found)

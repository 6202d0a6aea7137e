"""Every stage object, found by name: the stages of :mod:`pipeline.stages.kinds` and those of a document written
section by section (:mod:`pipeline.stages.sections`, which build on ``kinds`` and so register from their own
module). Callers that look a stage up by name import it from here, so the registry they read is always whole."""

from . import sections  # noqa: F401  (Plan and Section register themselves when loaded)
from .kinds import REGISTRY, apply_result, prepare_result, stage_for, stage_shows_records

__all__ = ["REGISTRY", "apply_result", "prepare_result", "stage_for", "stage_shows_records"]

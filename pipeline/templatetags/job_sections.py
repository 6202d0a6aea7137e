"""``{% job_sections job as sections %}``: the job page's list of a sectioned job's sections with their progress.

A tag rather than view context because the job page's live updates render the stages partial from the job alone
(:mod:`pipeline.consumers`)."""

from django import template

from ..job_models import Job
from ..stages.sections import section_progress

register = template.Library()


@register.simple_tag
def job_sections(job: Job) -> list[dict]:
    """The rows of :func:`pipeline.stages.sections.section_progress` for ``job`` ([] for a job with no plan)."""
    return section_progress(job)

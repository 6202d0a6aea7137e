"""Jobs without a worker: a model server registered for every role, and a job's stages run here in order."""

from pipeline.job_models import Job, StageRun
from pipeline.models import RETRIEVAL_ROLES, ModelServer, Role, RoleAssignment
from pipeline.stages.runner import stage_execute


def register(url: str, name: str = "scripted", roles=tuple(r for r in Role if r not in RETRIEVAL_ROLES)
             ) -> ModelServer:
    """Create a model server at ``url`` (16,384-token context) and give it ``roles`` (by default every role that
    generates text: a chat server answers no embeddings)."""
    server = ModelServer.objects.create(name=name, base_url=url, model_name="scripted-model", context_tokens=16384)
    for role in roles:
        RoleAssignment.objects.update_or_create(role=role, defaults={"server": server})
    return server


def run_all(job: Job) -> list[StageRun]:
    """Run the job's queued stages here, in order, as a worker would."""
    while run := StageRun.objects.filter(job=job, status__in=["queued", "waiting_for_server"]).order_by(
            "order", "attempt").first():
        stage_execute(run.pk, enqueue_next=False)
        if StageRun.objects.get(pk=run.pk).status == "waiting_for_server":
            break  # a worker would come back after the backoff; the test decides when
    job.refresh_from_db()
    return job.current_runs()

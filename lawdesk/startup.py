"""What ``make run`` does before it serves (:mod:`lawdesk.run`), once Django is set up: warn about missing OCR
languages, migrate, create the first attorney account, queue again the work that stopped with a worker, start the
periodic sweep for such work and the periodic model-server probe, and start the embedded model server when no
other model server is enabled."""

import sys
from pathlib import Path

from django.conf import settings
from django.core.management import call_command

from lawdesk.accounts import WeakPassword, ensure_first_attorney
from lawdesk.backup.snapshot import RESTORING
from matters.exhibits.ingest.ocr_check import ocr_problems
from matters.recovery import documents_recover, documents_sweep_schedule
from pipeline.digests.services import digests_sweep_schedule
from pipeline.embedded import (
    EMBEDDER_CONTEXT_TOKENS,
    EmbeddedServer,
    EmbeddedUnavailable,
    embedded_model,
    start_embedded_embedder,
    start_embedded_server,
)
from pipeline.own_servers import own_server_forget
from pipeline.retrieval.embedding import embedding_schedule, embedding_sweep_schedule
from pipeline.servers import (
    EMBEDDED_EMBEDDER_NAME,
    EMBEDDED_NAME,
    needs_embedded,
    needs_embedded_embedder,
    register_embedded,
    register_embedded_embedder,
)
from pipeline.stages.control import stage_recover
from pipeline.topology.probe import probe_schedule


def prepare() -> None:
    """Check, migrate, create the first account and recover stopped work; exits with the reason when
    LAWDESK_ADMIN_PASSWORD breaks a password rule or a restore into the data directory did not finish."""
    if (Path(settings.DATA_DIR) / RESTORING).exists():
        sys.exit(f"error: a restore into {settings.DATA_DIR} did not finish ({RESTORING} is there): this is not a "
                 "whole installation. Empty the data directory and the database, and restore again "
                 "(docs/backup.md).")
    for problem in ocr_problems(settings.LAWDESK_OCR_LANG):
        print(f"warning: {problem}", flush=True)
    call_command("migrate", interactive=False, verbosity=0)
    try:
        account = ensure_first_attorney(username=settings.LAWDESK_ADMIN_USER,
                                        password=settings.LAWDESK_ADMIN_PASSWORD)
    except WeakPassword as error:
        sys.exit(f"error: {error}")
    if account.created and account.password:
        # Printed to the terminal once, never logged: it exists nowhere else in clear text.
        print(
            f"\nFirst attorney account created.\n  username: {account.username}\n  password: {account.password}\n"
            "Write it down now; it is not shown again (change it in the admin after logging in).\n",
            flush=True,
        )
    elif account.created:
        print(f"First attorney account '{account.username}' created with LAWDESK_ADMIN_PASSWORD.", flush=True)
    # The ingest time limit bounds a live worker's silence on a file, so rows left by a version without leases
    # that have been idle longer have no worker.
    taken = documents_recover(idle_s=settings.LAWDESK_INGEST_TIMEOUT_S)
    if any(taken.values()):
        print(f"Took back {len(taken['exhibit'])} file(s), {len(taken['production'])} production(s) and "
              f"{len(taken['import'])} import(s) whose worker had stopped or whose task was lost: queued again, or "
              "failed where a worker had died on it too often.", flush=True)
    documents_sweep_schedule()  # and from now on, every two document leases, on whichever documents worker is free
    if recovered := stage_recover():
        print(f"Queued again {len(recovered)} job stage(s) whose worker had stopped.", flush=True)
    probe_schedule()  # the periodic health-and-speed probe of the model servers queues its own next run
    embedding_sweep_schedule()  # pages made ready are embedded within LAWDESK_EMBED_SWEEP_S, on a documents worker
    digests_sweep_schedule()  # and exhibits made ready are queued for their digest within the same time


def start_embedded_model() -> EmbeddedServer | None:
    """Start the embedded llama-server when no other model server is enabled; return it (or None)."""
    if not needs_embedded():
        return None
    try:
        model = embedded_model(settings.LAWDESK_EMBEDDED_MODEL)
        print(f"No model server is configured: starting the embedded model ({model.label} on llama-server)...",
              flush=True)
        server = start_embedded_server(model=settings.LAWDESK_EMBEDDED_MODEL,
                                       log_path=settings.DATA_DIR / "llama-server.log")
    except EmbeddedUnavailable as error:
        print(f"warning: the embedded model did not start: {error} Model stages will wait for a server.", flush=True)
        return None
    register_embedded(server)
    print(f"Embedded model server at {server.base_url} holds every role.", flush=True)
    return server


def start_embedded_embedder_server() -> EmbeddedServer | None:
    """Start the embedded embedding server when no other enabled server holds the embedder role; record it with
    that role, queue the embedding of every matter's pages still missing vectors, and return it (or None)."""
    if not needs_embedded_embedder():
        return None
    try:
        server = start_embedded_embedder(cache_dir=settings.DATA_DIR / "models",
                                         log_path=settings.DATA_DIR / "llama-server-embedder.log")
    except EmbeddedUnavailable as error:
        print(f"warning: the embedded embedder did not start: {error} Jobs retrieve their pages by words alone.",
              flush=True)
        return None
    register_embedded_embedder(server, context_tokens=EMBEDDER_CONTEXT_TOKENS)
    print(f"Embedded embedder at {server.base_url} holds the embedder role.", flush=True)
    embedding_schedule()
    return server


def forget_embedded_servers() -> None:
    """Forget the embedded servers' addresses (pipeline.own_servers): called before starting them, so a record
    left by a LawDesk that crashed allows nothing, and after stopping them."""
    for name in (EMBEDDED_NAME, EMBEDDED_EMBEDDER_NAME):
        own_server_forget(name=name)

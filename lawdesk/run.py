"""One command for the whole application: ``python -m lawdesk.run``.

Migrates the database, creates the first attorney account when there is none, starts the embedded model server
when no other model server is enabled (registering it for every role), then runs in this terminal the ASGI server
(HTTP and WebSocket, uvicorn) on LAWDESK_HOST:LAWDESK_PORT (127.0.0.1:8000), LAWDESK_WORKERS background workers
for the ``documents`` queue (ingest, OCR, productions), LAWDESK_MODEL_WORKERS for the ``models`` queue (job
stages) and one for the ``probes`` queue (the periodic model-server probe), so a long OCR batch never delays a
draft and a long draft never delays a probe. Ctrl-C, or any child stopping, stops all of them.
"""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import django
from django.conf import settings

from matters.exhibits.ingest.sandbox import SandboxUnavailable, probe

BASE_DIR = Path(__file__).resolve().parent.parent


def _check_programs() -> None:
    for program, purpose in (("tesseract", "OCR of scanned pages"),
                             ("soffice", "Word-processing documents (DOCX, DOC, WPD, RTF, ODT)")):
        if shutil.which(program) is None:
            print(f"warning: {program} is not installed; {purpose} will fail with a reason until it is.", flush=True)
    try:
        probe()
    except SandboxUnavailable as exc:
        print(f"warning: every upload (PDFs, images, OCR, word-processing documents) will fail with a reason until "
              f"the readers' sandbox starts, unless LAWDESK_READERS_UNSANDBOXED=1 is set: {exc}.", flush=True)


def asgi_server_command(host: str, port: str | int, *, trusted_proxies: str | None = None,
                        tls: tuple[str, str] | None = None, processes: int | None = None) -> list[str]:
    """The ASGI server (uvicorn): it hands a request body to Django as it arrives, which spools it to disk.
    (Daphne, through Twisted, parses a whole multipart body in memory first: about 13 times the upload's size.)
    Lifespan events are off because Channels' router does not take them. WebSockets through the ``websockets``
    library's Sans-I/O implementation: uvicorn deprecates its older ``websockets`` one with a warning at start.

    ``X-Forwarded-For`` / ``X-Forwarded-Proto`` are believed only from ``trusted_proxies`` (default:
    settings.LAWDESK_TRUSTED_PROXIES, comma-separated addresses or networks). uvicorn by default believes them from
    127.0.0.1, so anyone on the machine could pick the address that login lockouts and the login audit see;
    with no trusted proxy the headers are ignored and the peer's own address is used.

    ``tls``: (certificate, key) PEM paths for HTTPS; by default LAWDESK_TLS_CERT and LAWDESK_TLS_KEY from the
    settings, when set.

    ``processes``: uvicorn worker processes sharing the socket (default settings.LAWDESK_WEB_WORKERS). Django
    renders a page in one Python process at a time (the GIL), so one process used one core whatever the load;
    sessions, uploads and live progress live in the database, so any process can answer any request."""
    if trusted_proxies is None:
        trusted_proxies = settings.LAWDESK_TRUSTED_PROXIES
    if tls is None and settings.LAWDESK_TLS:
        tls = (settings.LAWDESK_TLS_CERT, settings.LAWDESK_TLS_KEY)
    proxies = ",".join(part.strip() for part in trusted_proxies.split(",") if part.strip())
    forwarded = ["--proxy-headers", "--forwarded-allow-ips", proxies] if proxies else ["--no-proxy-headers"]
    secure = ["--ssl-certfile", tls[0], "--ssl-keyfile", tls[1]] if tls else []
    processes = settings.LAWDESK_WEB_WORKERS if processes is None else processes
    several = ["--workers", str(processes)] if processes > 1 else []
    return [sys.executable, "-m", "uvicorn", "lawdesk.asgi:application", "--host", host, "--port", str(port),
            "--ws", "websockets-sansio", "--lifespan", "off", "--no-server-header", "--log-level", "warning",
            *forwarded, *secure, *several]


# Niceness of the documents workers (and so of their ingest children and Tesseract): a production or an OCR
# batch takes every core it can, and at equal priority the pages people are waiting for queued behind it.
DOCUMENTS_NICENESS = 10


def worker_command(queue: str, interval_s: float) -> list[str]:
    """A ``db_worker`` for one queue. The models queue is polled every 0.1 s: a stage's successor is queued when it
    ends, and the poll interval is most of the gap between two stages. The documents queue runs under ``nice``
    (DOCUMENTS_NICENESS): it still gets every core nobody else wants, but a page request is served first."""
    command = [sys.executable, "manage.py", "db_worker", "--queue-name", queue, "--no-reload", "--interval",
               str(interval_s)]
    if queue == "documents" and shutil.which("nice"):
        return ["nice", "-n", str(DOCUMENTS_NICENESS), *command]
    return command


def _process_name(command: list[str]) -> str:
    if "uvicorn" in command:
        return "the ASGI server"
    return f"the {command[command.index('--queue-name') + 1]} worker"


def _serve(host: str, port: int, workers: int, model_workers: int) -> int:
    """Run the ASGI server and the workers until Ctrl-C (SIGINT), SIGTERM or one of them stops; return a status."""
    server = asgi_server_command(host, port)
    # One worker for the periodic probe (pipeline.tasks.PROBES_QUEUE), so a long stage never delays it.
    commands = [server, *[worker_command("documents", 0.5)] * workers, *[worker_command("models", 0.1)] * model_workers,
                worker_command("probes", 1.0)]
    # Each child starts with Ctrl-C ignored (an ignored signal stays ignored across exec, and Python then sets no
    # KeyboardInterrupt handler): a Ctrl-C while a worker is still importing Django would otherwise print a
    # traceback. Once up, the server and the workers set their own handlers; this process stops each with SIGTERM.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    children = [subprocess.Popen(command) for command in commands]
    scheme = "https" if settings.LAWDESK_TLS else "http"
    print(f"LawDesk is running at {scheme}://{host}:{port}/ with {workers} document worker(s) and {model_workers} "
          f"model worker(s). Press Ctrl-C to stop. Log: {settings.LAWDESK_LOG_FILE}", flush=True)

    stopping = False

    def stop(signum, frame) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    exit_code = 0
    while not stopping:
        for child in children:
            if child.poll() is not None:
                print(f"{_process_name(child.args)} stopped (exit status {child.returncode}); stopping LawDesk.",
                      flush=True)
                stopping, exit_code = True, child.returncode or 1
        time.sleep(0.2)
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 20
    for child in children:
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()
    return exit_code


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lawdesk.settings")
    os.chdir(BASE_DIR)
    _check_programs()
    django.setup()
    # Imported once the app registry is ready: the startup steps use models of every app.
    from lawdesk import startup

    startup.prepare()
    startup.forget_embedded_servers()
    embedded = startup.start_embedded_model()
    embedder = startup.start_embedded_embedder_server()
    try:
        exit_code = _serve(host=settings.LAWDESK_HOST, port=settings.LAWDESK_PORT, workers=settings.LAWDESK_WORKERS,
                           model_workers=settings.LAWDESK_MODEL_WORKERS)
    finally:
        for server in (embedded, embedder):
            if server is not None:
                server.stop()
        # Their ports are free for anyone now: evidence no longer goes there (pipeline.own_servers).
        startup.forget_embedded_servers()
    print("LawDesk stopped.", flush=True)
    return exit_code


if __name__ == "__main__":
    sys.exit(main())

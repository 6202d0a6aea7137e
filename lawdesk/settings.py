"""LawDesk settings, read from environment variables with safe local defaults.

Every setting an operator may change is an environment variable named ``LAWDESK_*`` (or ``DATABASE_URL`` /
``REDIS_URL``); docs/configuration.md lists them. Defaults give a single-office install: SQLite in WAL mode and
every stored file under ``./var/`` (or ``LAWDESK_DATA_DIR``).
"""

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from lawdesk.layers import redis_channel_layers
from lawdesk.secret_key import secret_key_of

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("LAWDESK_DATA_DIR", BASE_DIR / "var")).resolve()
# Case material is for the LawDesk user alone: every process that loads these settings (server, workers, commands,
# the ingest children and the programs they start) creates files 0600 and folders 0700, the SQLite database and
# its journal included.
os.umask(0o077)
DATA_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
os.chmod(DATA_DIR, 0o700)


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value not in (None, "") else default


def _env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return float(value) if value not in (None, "") else default


SECRET_KEY = os.environ.get("LAWDESK_SECRET_KEY") or secret_key_of(DATA_DIR / "secret_key")
DEBUG = os.environ.get("LAWDESK_DEBUG", "") == "1"
ALLOWED_HOSTS = os.environ.get("LAWDESK_ALLOWED_HOSTS", "127.0.0.1,localhost").split(",")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "channels",
    "django_htmx",
    "template_partials",
    # Before django_tasks_db: its own ``db_worker`` command is LawDesk's reconnecting one.
    "lawdesk",
    "django_tasks",
    "django_tasks_db",
    "axes",
    "matters",
    "pipeline",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "lawdesk.middleware.SecurityHeadersMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "lawdesk.session_refresh.SessionRefreshMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "matters.permissions.RememberMemberships",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Axes must be last: it turns a locked-out login into its own response.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "lawdesk.urls"
ASGI_APPLICATION = "lawdesk.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{DATA_DIR / 'lawdesk.sqlite3'}"),
        conn_max_age=0,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # A pool of open connections per process (psycopg_pool through Django's "pool" option) instead of a new
    # connection per request. CONN_MAX_AGE cannot do it here: under ASGI each request runs its view in a thread
    # of its own, and a connection kept by a thread that ends is never reused. Health checks hand out only
    # connections that still answer, so a restarted PostgreSQL costs no request an error.
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1, "max_size": _env_int("LAWDESK_DB_POOL_SIZE", 10), "timeout": 30,
    }
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A thread keeps its connection: opening one and reading the schema cost 2 ms of a page's CPU. The web
    # server's request threads are kept (lawdesk.request_threads), so this is a connection per thread, not per
    # request; a SQLite connection outside a transaction holds no lock.
    DATABASES["default"]["CONN_MAX_AGE"] = None
    # WAL lets the web server read while a worker writes; the busy timeout makes a writer wait for the lock
    # instead of failing, and IMMEDIATE transactions take the write lock up front so two writers never deadlock.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 30,
    }
    if test_name := os.environ.get("LAWDESK_TEST_SQLITE"):
        DATABASES["default"]["TEST"] = {"NAME": test_name}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    # The rule set (matters.permissions) answers user.has_perm("matters.<act>", matter).
    "rules.permissions.ObjectPermissionBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Every password LawDesk sets goes through these: the admin's forms, manage.py changepassword/createsuperuser and
# the first account (LAWDESK_ADMIN_PASSWORD). Django's own validators (django.contrib.auth.password_validation).
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "matters:list"
LOGOUT_REDIRECT_URL = "login"

# Sessions end after this much inactivity: a request pushes the expiry forward when the last push is at least
# LAWDESK_SESSION_REFRESH_S old (lawdesk.session_refresh), so a page view does not write the session row.
SESSION_COOKIE_AGE = _env_int("LAWDESK_SESSION_IDLE_S", 4 * 3600)
SESSION_SAVE_EVERY_REQUEST = False
LAWDESK_SESSION_REFRESH_S = _env_int("LAWDESK_SESSION_REFRESH_S", 60)
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # the upload script reads it to send X-CSRFToken

# Failed logins: after AXES_FAILURE_LIMIT failures for one username from one address, that pair is locked out
# for AXES_COOLOFF_TIME hours.
AXES_FAILURE_LIMIT = _env_int("LAWDESK_LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = _env_int("LAWDESK_LOGIN_LOCKOUT_MIN", 15) / 60
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False
# The address lockouts and the login audit see is the connection's peer (REMOTE_ADDR), which the ASGI server
# rewrites from X-Forwarded-For only for a peer in LAWDESK_TRUSTED_PROXIES (empty: never). lawdesk.run hands this
# list to uvicorn; the callable makes axes read REMOTE_ADDR whatever packages are installed.
LAWDESK_TRUSTED_PROXIES = os.environ.get("LAWDESK_TRUSTED_PROXIES", "")
AXES_CLIENT_IP_CALLABLE = "lawdesk.client_address.client_address"

LANGUAGE_CODE = "en-us"
TIME_ZONE = os.environ.get("LAWDESK_TIME_ZONE", "UTC")
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = DATA_DIR / "static"

# Uploads stream to disk, never into memory (a 500 MB PDF must not be held in RAM): Django's ASGI handler
# spools a request body to a temporary file past FILE_UPLOAD_MAX_MEMORY_SIZE (0 would mean "never spool"), and
# the only upload handler writes each file to a temporary file.
FILE_UPLOAD_HANDLERS = ["django.core.files.uploadhandler.TemporaryFileUploadHandler"]
FILE_UPLOAD_TEMP_DIR = str(DATA_DIR / "tmp")
Path(FILE_UPLOAD_TEMP_DIR).mkdir(parents=True, exist_ok=True)
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440

# ASGI server processes (uvicorn --workers) lawdesk.run starts: one per core up to four, so pages render on more
# than one core while the workers OCR and stamp; one on a one-core machine.
LAWDESK_WEB_WORKERS = _env_int("LAWDESK_WEB_WORKERS", min(4, os.cpu_count() or 1))
# The most threads each of them runs requests in (lawdesk.request_threads): kept from one request to the next.
# A request that finds them all busy waits for one; they wait mostly on the database and the disk.
LAWDESK_WEB_THREADS = _env_int("LAWDESK_WEB_THREADS", 32)

# Ingest runs each file in a child process with these limits (address space in MiB, wall clock in seconds).
LAWDESK_INGEST_MEMORY_MB = _env_int("LAWDESK_INGEST_MEMORY_MB", 1536)
LAWDESK_INGEST_TIMEOUT_S = _env_int("LAWDESK_INGEST_TIMEOUT_S", 1800)
# Documents-queue work (processing an exhibit, stamping a production) holds a lease of this many seconds, renewed
# every third of it while the worker lives; work whose lease has expired is taken over by any running worker
# (docs/faults.md).
LAWDESK_DOCUMENT_LEASE_S = float(os.environ.get("LAWDESK_DOCUMENT_LEASE_S", "30"))
# How many times documents-queue work is taken over after its worker died before it is failed instead: a file
# that kills every worker reading it (a crash in a native library, the memory running out) is not tried forever.
LAWDESK_RECOVERY_MAX_TAKEOVERS = _env_int("LAWDESK_RECOVERY_MAX_TAKEOVERS", 3)
LAWDESK_OCR_DPI = _env_int("LAWDESK_OCR_DPI", 300)
# A spreadsheet whose sheets' used ranges span more cells than this is refused with the reason rather than printed
# (about 500 cells a printed page: the default is some thousand pages); 0 is no limit (docs/case-file.md).
LAWDESK_SHEET_MAX_CELLS = _env_int("LAWDESK_SHEET_MAX_CELLS", 500_000)
LAWDESK_OCR_WORKERS = _env_int("LAWDESK_OCR_WORKERS", os.cpu_count() or 1)
LAWDESK_OCR_LANG = os.environ.get("LAWDESK_OCR_LANG", "eng")
# PDFs, images and OCR are read inside the readers' bubblewrap sandbox; where it cannot start, a file fails with the
# reason. Only LAWDESK_READERS_UNSANDBOXED=1 reads without it, each exhibit so read saying it (docs/security.md).
LAWDESK_READERS_UNSANDBOXED = os.environ.get("LAWDESK_READERS_UNSANDBOXED", "") == "1"
# A page whose OCR mean word confidence (Tesseract, 0-100) is below this is flagged, and so is a finding grounded
# only on such pages (docs/reading.md).
LAWDESK_OCR_LOW_CONFIDENCE = float(os.environ.get("LAWDESK_OCR_LOW_CONFIDENCE", "60"))
# Email intake (docs/email.md): how deep messages attached to messages are unpacked, how many attachments of one
# message become exhibits, and the largest message and mailbox read (MiB); past each the rest is listed, not read.
LAWDESK_EMAIL_MAX_DEPTH = _env_int("LAWDESK_EMAIL_MAX_DEPTH", 10)
LAWDESK_EMAIL_MAX_ATTACHMENTS = _env_int("LAWDESK_EMAIL_MAX_ATTACHMENTS", 200)
LAWDESK_EMAIL_MAX_MB = _env_int("LAWDESK_EMAIL_MAX_MB", 150)
LAWDESK_MAILBOX_MAX_MB = _env_int("LAWDESK_MAILBOX_MAX_MB", 4096)
LAWDESK_MAILBOX_MAX_MESSAGES = _env_int("LAWDESK_MAILBOX_MAX_MESSAGES", 20_000)
# An archive (ZIP) attached to a message is unpacked into its files (docs/email.md): archives inside archives this
# deep, this many files, and this many MiB inflated from one message's archives; past each the rest is named, not
# unpacked (a "ZIP bomb" stops at the first limit it reaches).
LAWDESK_ARCHIVE_MAX_DEPTH = _env_int("LAWDESK_ARCHIVE_MAX_DEPTH", 3)
LAWDESK_ARCHIVE_MAX_MEMBERS = _env_int("LAWDESK_ARCHIVE_MAX_MEMBERS", 500)
LAWDESK_ARCHIVE_MAX_MB = _env_int("LAWDESK_ARCHIVE_MAX_MB", 200)
# A draft's table of authorities lists an authority cited on this many pages or more as "passim" (0: never).
LAWDESK_TOA_PASSIM_PAGES = _env_int("LAWDESK_TOA_PASSIM_PAGES", 5)
# Limits on a production ZIP: members, total uncompressed MiB, and compression ratio of any member.
LAWDESK_ZIP_MAX_MEMBERS = _env_int("LAWDESK_ZIP_MAX_MEMBERS", 50_000)
LAWDESK_ZIP_MAX_MB = _env_int("LAWDESK_ZIP_MAX_MB", 20_480)
LAWDESK_ZIP_MAX_RATIO = float(os.environ.get("LAWDESK_ZIP_MAX_RATIO", "200"))
# An upload whose text is at least this similar (0-1, rapidfuzz ratio) to generated text is marked generated.
LAWDESK_NEAR_DUPLICATE_RATIO = float(os.environ.get("LAWDESK_NEAR_DUPLICATE_RATIO", "0.9"))
# The model the embedded server serves when no other server is enabled (pipeline.embedded.EMBEDDED_MODELS).
LAWDESK_EMBEDDED_MODEL = os.environ.get("LAWDESK_EMBEDDED_MODEL", "smollm2-135m-instruct")

# Where evidence may be sent: model-server addresses (host:port, or a host alone for every port, comma- or
# space-separated), loopback included: a loopback port not listed is refused, since any local account may listen
# there. LawDesk's own embedded servers are allowed at the addresses it started them on. Set by whoever installs
# LawDesk; the admin cannot change it (pipeline.llm.hosts, docs/security-access.md).
LAWDESK_MODEL_HOSTS = os.environ.get("LAWDESK_MODEL_HOSTS", "")

# The key a backup's manifest is signed with and a restore checks it with (lawdesk.backup.signature): kept by the
# office apart from the backups (no backup holds it); `backup` and `restore` refuse without it.
LAWDESK_BACKUP_KEY = os.environ.get("LAWDESK_BACKUP_KEY", "")

# Decode-speed forecast (docs/topology.md): the host memory bandwidth in GB/s for servers with no GPU (blank: no
# forecast for them).
LAWDESK_CPU_MEMORY_BANDWIDTH_GBS = float(os.environ.get("LAWDESK_CPU_MEMORY_BANDWIDTH_GBS") or 0) or None

# `make run` (lawdesk.run): where the server listens, how many workers it starts per queue, the first account.
LAWDESK_HOST = os.environ.get("LAWDESK_HOST", "127.0.0.1")
LAWDESK_PORT = _env_int("LAWDESK_PORT", 8000)
LAWDESK_WORKERS = _env_int("LAWDESK_WORKERS", min(2, os.cpu_count() or 1))
LAWDESK_MODEL_WORKERS = _env_int("LAWDESK_MODEL_WORKERS", 1)
LAWDESK_ADMIN_USER = os.environ.get("LAWDESK_ADMIN_USER", "attorney")
# Unset or blank: a password is generated and printed once (lawdesk.accounts.ensure_first_attorney).
LAWDESK_ADMIN_PASSWORD = os.environ.get("LAWDESK_ADMIN_PASSWORD")

# Job stages (pipeline.stages.scheduling): an attempt's lease in seconds, the first wait for a server that is down
# or loading (doubling each time) and how many waits before the stage fails, and how long a request may go
# without a byte from its server before it counts as stalled.
LAWDESK_STAGE_LEASE_S = _env_float("LAWDESK_STAGE_LEASE_S", 30)
LAWDESK_STAGE_BACKOFF_S = _env_float("LAWDESK_STAGE_BACKOFF_S", 5)
LAWDESK_STAGE_MAX_WAITS = _env_int("LAWDESK_STAGE_MAX_WAITS", 6)
# New attempts LawDesk makes itself after a stage's answer could not be used (pipeline/stages/retries.py).
LAWDESK_STAGE_AUTO_RETRIES = _env_int("LAWDESK_STAGE_AUTO_RETRIES", 1)
LAWDESK_STAGE_READ_TIMEOUT_S = _env_float("LAWDESK_STAGE_READ_TIMEOUT_S", 120)
# The queue of stage runs (pipeline.stages.order, pipeline.stages.queue): seconds after its submission past which a
# job counts as aged and goes ahead of newer work (2 hours), and how often a worker with nothing it may start
# looks again for a free slot.
LAWDESK_QUEUE_AGING_S = _env_float("LAWDESK_QUEUE_AGING_S", 7200)
LAWDESK_QUEUE_POLL_S = _env_float("LAWDESK_QUEUE_POLL_S", 0.25)
# Answer budgets in tokens (pipeline.stages.specs); the draft budget also covers revise and summarize.
LAWDESK_DRAFT_MAX_TOKENS = _env_int("LAWDESK_DRAFT_MAX_TOKENS", 1024)
LAWDESK_GATE_MAX_TOKENS = _env_int("LAWDESK_GATE_MAX_TOKENS", 640)
LAWDESK_REVIEW_MAX_TOKENS = _env_int("LAWDESK_REVIEW_MAX_TOKENS", 1024)
LAWDESK_EXTRACT_MAX_TOKENS = _env_int("LAWDESK_EXTRACT_MAX_TOKENS", 1024)
# Seconds between two runs of the periodic model-server probe (pipeline.topology.probe.probe_schedule).
LAWDESK_PROBE_INTERVAL_S = _env_int("LAWDESK_PROBE_INTERVAL_S", 300)
# How often the embedding sweep looks for pages made ready since (pipeline.retrieval.embedding), in seconds.
LAWDESK_EMBED_SWEEP_S = _env_int("LAWDESK_EMBED_SWEEP_S", 30)

TASKS = {
    "default": {
        "BACKEND": "django_tasks_db.DatabaseBackend",
        "QUEUES": ["documents", "models", "probes"],
    }
}

CHANNEL_LAYERS = redis_channel_layers(redis_url) if (redis_url := os.environ.get("REDIS_URL")) else {}

SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

# TLS mode for use across an office network (docs/security.md): uvicorn serves HTTPS with this certificate and
# key (PEM files), cookies are sent over HTTPS only, and browsers are told by HSTS to use nothing else.
LAWDESK_TLS_CERT = os.environ.get("LAWDESK_TLS_CERT", "")
LAWDESK_TLS_KEY = os.environ.get("LAWDESK_TLS_KEY", "")
if bool(LAWDESK_TLS_CERT) != bool(LAWDESK_TLS_KEY):
    raise ImproperlyConfigured("Set both LAWDESK_TLS_CERT and LAWDESK_TLS_KEY for the TLS mode, or neither.")
LAWDESK_TLS = bool(LAWDESK_TLS_CERT)
if LAWDESK_TLS:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = True
    SECURE_HSTS_SECONDS = 365 * 24 * 3600
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    # HSTS preload asks browser makers to hard-code a public domain name; an office server's name is not one.
    SILENCED_SYSTEM_CHECKS = ["security.W021"]

# The terminal of `make run` shows startup, the address, errors and warnings a person must act on; everything
# else (each task's RUNNING / SUCCESSFUL line, worker start-up, requests) goes to the log file in the data
# directory. Every process (server, workers) appends to the same file.
LAWDESK_LOG_FILE = DATA_DIR / "lawdesk.log"
_LOG_LEVEL = os.environ.get("LAWDESK_LOG_LEVEL", "INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"file": {"format": "%(asctime)s %(process)d %(name)s %(levelname)s %(message)s"}},
    "filters": {"answer_without_traceback": {"()": "lawdesk.log_filters.AnswerWithoutTraceback"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "level": "WARNING"},
        "console_errors": {"class": "logging.StreamHandler", "level": "ERROR"},
        "file": {"class": "logging.FileHandler", "filename": str(LAWDESK_LOG_FILE), "delay": True,
                 "formatter": "file", "level": "DEBUG"},
    },
    "loggers": {
        **{name: {"handlers": ["console", "file"], "level": _LOG_LEVEL, "propagate": False}
           for name in ("lawdesk", "matters", "pipeline")},
        # Django Tasks' per-task lines and the db_worker's own (it sets their level from --verbosity).
        **{name: {"handlers": ["console", "file"], "level": "INFO", "propagate": False}
           for name in ("django_tasks", "django.tasks", "django_tasks_db")},
        # 404s and 403s are answers, not problems: the file keeps them; the terminal shows server errors.
        "django.request": {"handlers": ["console_errors", "file"], "level": "WARNING", "propagate": False,
                           "filters": ["answer_without_traceback"]},
        "django": {"handlers": ["console", "file"], "level": "INFO", "propagate": False},
    },
}

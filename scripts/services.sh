# Sourced by scripts/test.sh: make sure the PostgreSQL and Redis servers the tests use are running, starting
# private ones when the machine has none. Exports LAWDESK_TEST_PG_URL and REDIS_TEST_URL.

_as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo "$@"; else
    echo "Cannot run '$*' without root rights." >&2; return 1; fi
}

ensure_postgres() {
  export LAWDESK_TEST_PG_URL="${LAWDESK_TEST_PG_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
  if .venv/bin/python - "$LAWDESK_TEST_PG_URL" <<'PY' 2>/dev/null; then return 0; fi
import sys, psycopg
psycopg.connect(sys.argv[1], connect_timeout=3).close()
PY
  echo "No PostgreSQL answers at $LAWDESK_TEST_PG_URL; starting a private server on port 55432."
  local bindir
  bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  if [ -z "$bindir" ]; then
    _as_root apt-get update -qq && DEBIAN_FRONTEND=noninteractive _as_root apt-get install -y -qq postgresql >/dev/null || {
      echo "PostgreSQL is needed for the tests: install the Debian package postgresql, or set LAWDESK_TEST_PG_URL." >&2
      exit 1; }
    bindir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  fi
  local pgdata=/tmp/lawdesk-test-pg run_as=()
  if [ "$(id -u)" = 0 ]; then run_as=(runuser -u postgres --); fi
  if [ ! -f "$pgdata/PG_VERSION" ]; then
    mkdir -p "$pgdata" && [ "$(id -u)" = 0 ] && chown postgres "$pgdata"
    "${run_as[@]}" "$bindir/initdb" -D "$pgdata" -A trust -U postgres >/dev/null
  fi
  "${run_as[@]}" "$bindir/pg_ctl" -D "$pgdata" -o "-p 55432 -k /tmp -c listen_addresses=127.0.0.1" -w -l "$pgdata/log" start >/dev/null || true
  export LAWDESK_TEST_PG_URL=postgres://postgres@127.0.0.1:55432/postgres
}

ensure_redis() {
  export REDIS_TEST_URL="${REDIS_TEST_URL:-redis://127.0.0.1:6379/15}"
  if .venv/bin/python - "$REDIS_TEST_URL" <<'PY' 2>/dev/null; then return 0; fi
import sys, redis
redis.Redis.from_url(sys.argv[1], socket_connect_timeout=3).ping()
PY
  echo "No Redis answers at $REDIS_TEST_URL; starting a private server on port 56379."
  if ! command -v redis-server >/dev/null; then
    _as_root apt-get update -qq && DEBIAN_FRONTEND=noninteractive _as_root apt-get install -y -qq redis-server >/dev/null || {
      echo "Redis is needed for the live-progress tests: install the Debian package redis-server." >&2; exit 1; }
  fi
  redis-server --port 56379 --bind 127.0.0.1 --save '' --daemonize yes >/dev/null
  export REDIS_TEST_URL=redis://127.0.0.1:56379/15
}

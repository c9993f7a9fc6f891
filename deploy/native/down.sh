#!/usr/bin/env bash
# Stop what deploy/native/up.sh started: the warden worker, temporal-server, then PostgreSQL.
# State (the database, WARDEN_HOME, logs) stays in $WARDEN_NATIVE_DIR (default .warden/native);
# remove that directory to start from nothing.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
STATE="${WARDEN_NATIVE_DIR:-$ROOT/.warden/native}"

stop_pid() { # <name>: SIGTERM the process group up.sh started, wait up to 30 s, then SIGKILL
  local f="$STATE/run/$1.pid" pid
  [ -f "$f" ] || return 0
  pid="$(cat "$f")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL -- "-$pid" 2>/dev/null || true
    echo "stopped $1 (pid $pid)"
  fi
  rm -f "$f"
}
stop_pid worker
stop_pid temporal
if [ -s "$STATE/pg/PG_VERSION" ]; then
  PG_CTL="$(command -v pg_ctl || ls /usr/lib/postgresql/*/bin/pg_ctl | sort -V | tail -1)"
  as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
  if as_pg "$PG_CTL" -D "$STATE/pg" status >/dev/null 2>&1; then
    as_pg "$PG_CTL" -D "$STATE/pg" -m fast -w stop >/dev/null && echo "stopped PostgreSQL"
  fi
fi

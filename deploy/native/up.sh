#!/usr/bin/env bash
# warden's production topology without containers: PostgreSQL, a Temporal server (temporal-server
# and temporal-sql-tool built from their Go modules at the version docker-compose.yml pins), the
# same one-shot jobs as compose (deploy/temporal/*.sh), and the warden worker.
#
#   deploy/native/up.sh                 bring everything up (state in .warden/native), leave it running
#   deploy/native/up.sh --walkthrough   ...then run the README's walk-through against it
#   deploy/native/up.sh --walkthrough --down   ...and stop everything afterwards (npm run prod:native)
#   deploy/native/down.sh               stop what up.sh started
#
# Needs: bash, Go (to build the Temporal server once; cached in ~/.cache/warden), PostgreSQL's
# server binaries (initdb, pg_ctl, postgres; apt-get installs them when missing and run as root),
# python3 (the walk-through's webhook listener), and `npm run build` done.
#
# Environment (all optional):
#   WARDEN_NATIVE_DIR           state directory (default <repo>/.warden/native)
#   WARDEN_NATIVE_PORT_OFFSET   added to every port below (default 0): PostgreSQL 5432, Temporal
#                               frontend 7233 (HTTP 7243), history 7234, matching 7235, worker 7239,
#                               membership 6933-6939. Use it to run beside another Temporal.
#   POSTGRES_PASSWORD           password of the `temporal` database role (default temporal)
#   TEMPORAL_NAMESPACE          (default default), WARDEN_TASK_QUEUE (default warden)
#
# Each step is idempotent, like the compose jobs: run it again and it reuses the database, the
# schema, the namespace and the search attributes it finds.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"

# The server version: the tag of temporalio/server in docker-compose.yml (test/unit/compose.test.ts
# keeps this and that in step).
TEMPORAL_SERVER_VERSION=1.31.2

WALKTHROUGH=0
DOWN=0
for a in "$@"; do
  case "$a" in
    --walkthrough) WALKTHROUGH=1 ;;
    --down) DOWN=1 ;;
    -h | --help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "unknown argument: $a (see --help)" >&2; exit 2 ;;
  esac
done

STATE="${WARDEN_NATIVE_DIR:-$ROOT/.warden/native}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/warden"
OFF="${WARDEN_NATIVE_PORT_OFFSET:-0}"
PG_PORT=$((5432 + OFF))
export FRONTEND_GRPC_PORT=$((7233 + OFF)) FRONTEND_HTTP_PORT=$((7243 + OFF))
export HISTORY_GRPC_PORT=$((7234 + OFF)) MATCHING_GRPC_PORT=$((7235 + OFF)) WORKER_GRPC_PORT=$((7239 + OFF))
export INTERNAL_FRONTEND_GRPC_PORT=$((7236 + OFF)) INTERNAL_FRONTEND_HTTP_PORT=$((7246 + OFF))
export FRONTEND_MEMBERSHIP_PORT=$((6933 + OFF)) HISTORY_MEMBERSHIP_PORT=$((6934 + OFF))
export MATCHING_MEMBERSHIP_PORT=$((6935 + OFF)) INTERNAL_FRONTEND_MEMBERSHIP_PORT=$((6936 + OFF))
export WORKER_MEMBERSHIP_PORT=$((6939 + OFF))
PASSWORD="${POSTGRES_PASSWORD:-temporal}"
export TEMPORAL_ADDRESS="127.0.0.1:$FRONTEND_GRPC_PORT"
export TEMPORAL_NAMESPACE="${TEMPORAL_NAMESPACE:-default}"
export WARDEN_TASK_QUEUE="${WARDEN_TASK_QUEUE:-warden}"

mkdir -p "$STATE/logs" "$STATE/run"
T0=$(date +%s)
step() { printf '== [%4ss] %s\n' "$(($(date +%s) - T0))" "$*"; }
die() { echo "native: $*" >&2; exit 1; }
wait_for() { # <seconds> <what> <command...>
  local n="$1" what="$2"; shift 2
  for _ in $(seq 1 "$n"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
  die "$what did not come up within ${n}s (logs in $STATE/logs)"
}

# --- 1. Temporal server and temporal-sql-tool, built from go.temporal.io/server -----------------
SERVER_BIN="$CACHE/temporal-server-$TEMPORAL_SERVER_VERSION/bin"
if [ ! -x "$SERVER_BIN/temporal-server" ] || [ ! -x "$SERVER_BIN/temporal-sql-tool" ]; then
  command -v go >/dev/null || die "Go is needed to build temporal-server $TEMPORAL_SERVER_VERSION (or put temporal-server and temporal-sql-tool in $SERVER_BIN)"
  step "building temporal-server and temporal-sql-tool $TEMPORAL_SERVER_VERSION with $(go version | cut -d' ' -f3) (once; cached in $SERVER_BIN)"
  mkdir -p "$SERVER_BIN"
  # `go install module/cmd@version`: the module's own go.mod and go.sum, nothing from this repo.
  GOBIN="$SERVER_BIN" GOFLAGS="${GOFLAGS:--trimpath}" CGO_ENABLED=0 \
    go install "go.temporal.io/server/cmd/server@v$TEMPORAL_SERVER_VERSION" "go.temporal.io/server/cmd/tools/sql@v$TEMPORAL_SERVER_VERSION"
  mv -f "$SERVER_BIN/server" "$SERVER_BIN/temporal-server"
  mv -f "$SERVER_BIN/sql" "$SERVER_BIN/temporal-sql-tool"
fi
step "temporal-server: $("$SERVER_BIN/temporal-server" --version 2>&1 | tail -1)"

# The temporal CLI for the jobs and the walk-through: TEMPORAL_CLI_PATH, PATH, or warden's own.
[ -f dist/src/cli/main.js ] || die "run \`npm run build\` first"
TEMPORAL_CLI="$(node dist/src/cli/main.js setup --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).temporalCli))')"
mkdir -p "$STATE/bin"
ln -sf "$TEMPORAL_CLI" "$STATE/bin/temporal"
ln -sf "$SERVER_BIN/temporal-sql-tool" "$STATE/bin/temporal-sql-tool"
export PATH="$STATE/bin:$PATH"

# --- 2. PostgreSQL ------------------------------------------------------------------------------
if ! command -v initdb >/dev/null; then
  PG_INITDB="$(ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -1 || true)"
  if [ -z "$PG_INITDB" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    step "installing PostgreSQL (apt-get)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    PG_INITDB="$(ls /usr/lib/postgresql/*/bin/initdb | sort -V | tail -1)"
  fi
  [ -n "$PG_INITDB" ] || die "PostgreSQL's server binaries (initdb, pg_ctl) are not installed"
else
  PG_INITDB="$(command -v initdb)"
fi
PG_BIN="$(dirname "$(readlink -f "$PG_INITDB")")"
PGDATA="$STATE/pg"
# PostgreSQL refuses to run as root: as root, run it as the `postgres` user (Debian's package makes it).
as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 || die "running as root needs a 'postgres' user to run PostgreSQL as"
  chown postgres "$STATE"
  chmod 0755 "$STATE"
  runuser -u postgres -- test -x "$STATE" || die "the postgres user cannot reach $STATE (a parent directory is not world-searchable); set WARDEN_NATIVE_DIR to a directory it can reach, e.g. /var/lib/warden-native"
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  step "initdb $PGDATA ($("$PG_BIN/postgres" --version))"
  mkdir -p "$PGDATA"
  [ "$(id -u)" = 0 ] && chown postgres "$PGDATA"
  pwfile="$STATE/run/pwfile"
  printf '%s\n' "$PASSWORD" >"$pwfile"
  [ "$(id -u)" = 0 ] && chown postgres "$pwfile"
  # The superuser is `temporal`, like the compose service's POSTGRES_USER; password auth on TCP.
  as_pg "$PG_BIN/initdb" -D "$PGDATA" -U temporal --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 >"$STATE/logs/initdb.log"
  rm -f "$pwfile"
fi
if as_pg "$PG_BIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; then
  step "PostgreSQL already running on 127.0.0.1:$PG_PORT"
else
  step "starting PostgreSQL on 127.0.0.1:$PG_PORT"
  touch "$STATE/logs/postgresql.log"
  [ "$(id -u)" = 0 ] && chown postgres "$STATE/logs/postgresql.log"
  as_pg "$PG_BIN/pg_ctl" -D "$PGDATA" -l "$STATE/logs/postgresql.log" -w -t 60 \
    -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=$PGDATA" start >/dev/null
fi
wait_for 60 PostgreSQL as_pg "$PG_BIN/pg_ctl" -D "$PGDATA" status

# --- 3. The schema job: deploy/temporal/setup-schema.sh, exactly as compose runs it -------------
step "schema (deploy/temporal/setup-schema.sh with temporal-sql-tool $TEMPORAL_SERVER_VERSION)"
SQL_PLUGIN=postgres12 SQL_HOST=127.0.0.1 SQL_PORT="$PG_PORT" SQL_USER=temporal SQL_PASSWORD="$PASSWORD" \
  sh deploy/temporal/setup-schema.sh >"$STATE/logs/schema.log" 2>&1 || { tail -20 "$STATE/logs/schema.log" >&2; die "schema setup failed"; }
tail -1 "$STATE/logs/schema.log"

# --- 4. The Temporal server: the image's embedded config template, the compose service's env ----
pid_alive() { [ -f "$STATE/run/$1.pid" ] && kill -0 "$(cat "$STATE/run/$1.pid")" 2>/dev/null; }
start_temporal() {
  step "starting temporal-server $TEMPORAL_SERVER_VERSION on $TEMPORAL_ADDRESS"
  DB=postgres12 DB_PORT="$PG_PORT" POSTGRES_SEEDS=127.0.0.1 POSTGRES_USER=temporal POSTGRES_PWD="$PASSWORD" \
    BIND_ON_IP=127.0.0.1 TEMPORAL_BROADCAST_ADDRESS=127.0.0.1 \
    DYNAMIC_CONFIG_FILE_PATH="$ROOT/deploy/temporal/dynamicconfig/warden.yaml" \
    setsid "$SERVER_BIN/temporal-server" start >>"$STATE/logs/temporal.log" 2>&1 </dev/null &
  echo $! >"$STATE/run/temporal.pid"
  wait_for 120 "temporal-server" temporal operator cluster health --address "$TEMPORAL_ADDRESS"
}
if pid_alive temporal; then step "temporal-server already running"; else start_temporal; fi

# --- 5. The namespace and search-attribute jobs -------------------------------------------------
step "namespace and search attributes (deploy/temporal/create-namespace.sh, register-search-attributes.sh)"
WAIT_SECONDS=1 sh deploy/temporal/create-namespace.sh >"$STATE/logs/namespace.log" 2>&1 || { cat "$STATE/logs/namespace.log" >&2; die "namespace job failed"; }
tail -1 "$STATE/logs/namespace.log"
# The same Name=Type list as the compose job (test/unit/compose.test.ts checks both against the code).
WAIT_SECONDS=1 sh deploy/temporal/register-search-attributes.sh \
  WardenState=Keyword WardenEscalationStep=Int WardenPaused=Bool WardenCostUsd=Double WardenTokens=Int WardenParent=Keyword WardenEvaluatorCostUsd=Double WardenLabels=KeywordList \
  >"$STATE/logs/search-attributes.log" 2>&1 || { cat "$STATE/logs/search-attributes.log" >&2; die "search-attribute job failed"; }
tail -1 "$STATE/logs/search-attributes.log"

# --- 6. The warden worker -----------------------------------------------------------------------
export WARDEN_HOME="$STATE/home"
mkdir -p "$WARDEN_HOME"
start_worker() {
  step "starting the warden worker (node $(node --version), task queue $WARDEN_TASK_QUEUE, WARDEN_HOME $WARDEN_HOME)"
  setsid node dist/workers/main.js >>"$STATE/logs/worker.log" 2>&1 </dev/null &
  echo $! >"$STATE/run/worker.pid"
  wait_for 60 "the warden worker" grep -q '"msg":"worker started"' "$STATE/logs/worker.log"
}
if pid_alive worker; then step "worker already running"; else start_worker; fi

cat <<EOF
== up: Temporal $TEMPORAL_SERVER_VERSION at $TEMPORAL_ADDRESS on PostgreSQL 127.0.0.1:$PG_PORT, worker on task queue $WARDEN_TASK_QUEUE
   env for the CLI:  export TEMPORAL_ADDRESS=$TEMPORAL_ADDRESS
   warden:           node $ROOT/dist/src/cli/main.js list
   temporal:         $TEMPORAL_CLI workflow list --address $TEMPORAL_ADDRESS
   logs:             $STATE/logs/     stop: $ROOT/deploy/native/down.sh
EOF

# --- 7. The README's walk-through, against this topology --------------------------------------
walkthrough() {
  local W="node $ROOT/dist/src/cli/main.js" A="fixer-$(date +%s)" B="bot-$(date +%s)" pass=0 fail=0 hook_pid out i
  check() { # <description> <command...>: one line per check, never stops the walk-through
    local what="$1"; shift
    if "$@"; then pass=$((pass + 1)); echo "   ok    $what"; else fail=$((fail + 1)); echo "   FAIL  $what"; fi
  }
  js() { node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const v=JSON.parse(s);process.stdout.write(String($1))})"; }
  status_is() { # <agent> <js condition on s> <seconds>
    for _ in $(seq 1 "$3"); do
      [ "$($W status "$1" --json 2>/dev/null | js "(s=>$2)(v)" 2>/dev/null)" = true ] && return 0
      sleep 1
    done
    return 1
  }

  step "walk-through: webhook listener"
  python3 - "$STATE/run/hook.port" "$STATE/logs/webhook.jsonl" >"$STATE/logs/webhook.log" 2>&1 <<'PY' &
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get('content-length', 0)))
        with open(sys.argv[2], 'ab') as f: f.write(body.replace(b'\n', b' ') + b'\n')
        self.send_response(204); self.end_headers()
    def log_message(self, *a): pass
s = http.server.HTTPServer(('127.0.0.1', 0), H)
open(sys.argv[1], 'w').write(str(s.server_port))
s.serve_forever()
PY
  hook_pid=$!
  wait_for 10 "the webhook listener" test -s "$STATE/run/hook.port"
  local hook="http://127.0.0.1:$(cat "$STATE/run/hook.port")/hook"

  step "walk-through 1: warden start $A --webhook $hook"
  check "start" $W start "$A" --task "Make npm run build pass" --webhook "$hook"

  step "walk-through 2: 15 spiraling turns reported with warden report"
  for i in $(seq 1 15); do
    out=$(echo '{"id":"t'$i'","text":"Retrying the build.","toolCalls":[{"name":"shell","args":"npm run build","result":"error TS2307","ok":false}]}' | $W report "$A" --json)
    case $i in
      6) check "turn 6's reply carries the [CORRECTION]" test "$(echo "$out" | js "v.whispers.map(w=>w.type).join()")" = CORRECTION ;;
      11) check "turn 11's reply carries the second warning" test "$(echo "$out" | js "v.whispers.map(w=>w.type).join()")" = CORRECTION ;;
    esac
  done
  check "escalated: awaiting-input, step 3/3, 1 whisper pending" status_is "$A" "s.state==='awaiting-input'&&s.escalationStep===3&&s.pendingWhispers===1" 15
  check "the webhook received the escalation" eventually 15 grep -q "$A" "$STATE/logs/webhook.jsonl"
  check "warden list --query \"WardenState = 'awaiting-input'\" shows it" status_list "$A"
  $W status "$A" | sed 's/^/   | /'

  step "walk-through 3: restart temporal-server (state is in PostgreSQL)"
  local old
  old="$(cat "$STATE/run/temporal.pid")"
  kill "$old"
  for _ in $(seq 1 60); do kill -0 "$old" 2>/dev/null || break; sleep 1; done
  start_temporal
  check "still awaiting-input at step 3 after the server restart" status_is "$A" "s.state==='awaiting-input'&&s.escalationStep===3" 60

  step "walk-through 4: resume with the temporal CLI (no payload)"
  check "temporal workflow signal --name resume" "$TEMPORAL_CLI" workflow signal --address "$TEMPORAL_ADDRESS" --namespace "$TEMPORAL_NAMESPACE" --workflow-id "agent-$A" --name resume
  check "running again, ladder reset to step 0" status_is "$A" "s.state==='running'&&s.escalationStep===0" 15
  out=$(echo '{"id":"t16","text":"Reading the error first."}' | $W report "$A" --json)
  check "the next reply delivers the [ESCALATION] whisper and is not paused" test "$(echo "$out" | js "v.whispers.map(w=>w.type).join()+' '+v.paused")" = "ESCALATION false"

  step "walk-through 5: driven mode with the example Python agent (a relative --driver-command path)"
  check "start $B --driver command" $W start "$B" --task "spiral: make npm run build pass" --eval-interval 3 --driver command --driver-command "python3 test/fixtures/agent.py"
  check "driven agent escalates: awaiting-input, step 3/3" status_is "$B" "s.state==='awaiting-input'&&s.escalationStep===3" 90
  $W status "$B" | sed 's/^/   | /'
  check "abort $B" $W abort "$B" --reason "walk-through done"
  check "abort $A" $W abort "$A" --reason "walk-through done"
  check "$A ended failed" status_is "$A" "s.state==='failed'" 15

  kill "$hook_pid" 2>/dev/null || true
  step "walk-through: $pass checks passed, $fail failed"
  [ "$fail" = 0 ]
}
eventually() { # <seconds> <command...>: like wait_for, but fails instead of exiting
  local n="$1"; shift
  for _ in $(seq 1 "$n"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
  return 1
}
status_list() { # <agent>: visibility is eventually consistent; allow it a few seconds
  for _ in $(seq 1 15); do
    node "$ROOT/dist/src/cli/main.js" list --query "WardenState = 'awaiting-input'" --json | grep -q "\"agentId\": \"$1\"" && return 0
    sleep 1
  done
  return 1
}

rc=0
if [ "$WALKTHROUGH" = 1 ]; then
  set +e
  walkthrough
  rc=$?
  set -e
fi
if [ "$DOWN" = 1 ]; then WARDEN_NATIVE_DIR="$STATE" bash "$ROOT/deploy/native/down.sh"; fi
exit $rc

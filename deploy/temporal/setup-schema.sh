#!/bin/sh
# One-shot job (temporalio/admin-tools, or the native production script deploy/native/up.sh):
# create Temporal's two PostgreSQL databases if they are missing and bring both schemas up to the
# version this temporal-sql-tool carries. The schema comes from the tool itself (`--schema-name
# postgresql/v12/...`, embedded in the binary), so it always matches the tool's server version and
# no schema directory has to exist on disk. Safe to re-run: `create-database` succeeds when the
# database exists (1.31: a duplicate-database error is treated as success), `setup-schema -v 0.0`
# only creates the version tables if they are missing, and `update-schema` applies only the
# versioned migrations that are not there yet. Run it with the temporal-sql-tool of the SAME
# version as the server (upgrade one minor version at a time).
#
# Connection comes from the environment temporal-sql-tool reads itself:
#   SQL_PLUGIN (postgres12), SQL_HOST, SQL_PORT, SQL_USER, SQL_PASSWORD
# TEMPORAL_SCHEMA_NAME_PREFIX: the embedded schema family (default postgresql/v12).
set -eu

: "${SQL_HOST:?SQL_HOST is required}"
: "${SQL_USER:?SQL_USER is required}"
: "${SQL_PASSWORD:?SQL_PASSWORD is required}"
export SQL_PLUGIN="${SQL_PLUGIN:-postgres12}"
export SQL_PORT="${SQL_PORT:-5432}"

SCHEMA_PREFIX="${TEMPORAL_SCHEMA_NAME_PREFIX:-postgresql/v12}"
ATTEMPTS="${WAIT_ATTEMPTS:-30}"
SLEEP="${WAIT_SECONDS:-2}"

# The compose healthcheck already waits for PostgreSQL; retries cover a database that is still
# finishing its first start when the job begins.
retry() {
  i=1
  until "$@"; do
    if [ "$i" -ge "$ATTEMPTS" ]; then
      echo "failed after $ATTEMPTS attempts: $*" >&2
      return 1
    fi
    i=$((i + 1))
    sleep "$SLEEP"
  done
}

# Every step is retried: a failure means PostgreSQL is unreachable (still starting) or refuses.
setup() { # <database> <embedded schema: temporal | visibility>
  retry temporal-sql-tool --db "$1" create-database
  retry temporal-sql-tool --db "$1" setup-schema -v 0.0
  retry temporal-sql-tool --db "$1" update-schema --schema-name "$SCHEMA_PREFIX/$2"
  echo "schema of $1 is up to date"
}

setup temporal temporal
setup temporal_visibility visibility
echo "Temporal PostgreSQL schema setup complete"

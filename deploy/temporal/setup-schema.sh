#!/bin/sh
# One-shot job (temporalio/admin-tools): create Temporal's two PostgreSQL databases if they are
# missing and bring both schemas up to the version this admin-tools image ships. Safe to re-run:
# `setup-schema -v 0.0` is a no-op on an initialised database and `update-schema` only applies
# the versioned migrations that are not there yet. Run it with the admin-tools image of the SAME
# version as temporalio/server (upgrade one minor version at a time).
#
# Connection comes from the environment temporal-sql-tool reads itself:
#   SQL_PLUGIN (postgres12), SQL_HOST, SQL_PORT, SQL_USER, SQL_PASSWORD
set -eu

: "${SQL_HOST:?SQL_HOST is required}"
: "${SQL_USER:?SQL_USER is required}"
: "${SQL_PASSWORD:?SQL_PASSWORD is required}"
export SQL_PLUGIN="${SQL_PLUGIN:-postgres12}"
export SQL_PORT="${SQL_PORT:-5432}"

SCHEMA_ROOT="${TEMPORAL_SCHEMA_ROOT:-/etc/temporal/schema/postgresql/v12}"
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

# `create-database` fails when the database exists, which is the normal case on every start after
# the first, so its failure is not an error; `setup-schema` then fails only if the database really
# is unreachable or missing, and is retried (with the create) until it is there.
create_and_setup() { # <database>
  if temporal-sql-tool --db "$1" create-database >/dev/null 2>&1; then
    echo "created database $1"
  fi
  temporal-sql-tool --db "$1" setup-schema -v 0.0
}

setup() { # <database> <schema subdirectory>
  retry create_and_setup "$1"
  retry temporal-sql-tool --db "$1" update-schema -d "$SCHEMA_ROOT/$2/versioned"
  echo "schema of $1 is up to date"
}

setup temporal temporal
setup temporal_visibility visibility
echo "Temporal PostgreSQL schema setup complete"

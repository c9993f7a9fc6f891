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

# The compose healthcheck already waits for PostgreSQL; this covers a database that is still
# finishing its first start when the job begins.
i=1
until nc -z -w 5 "$SQL_HOST" "$SQL_PORT"; do
  if [ "$i" -ge "$ATTEMPTS" ]; then
    echo "PostgreSQL at $SQL_HOST:$SQL_PORT did not accept connections after $ATTEMPTS attempts" >&2
    exit 1
  fi
  i=$((i + 1))
  sleep "$SLEEP"
done

setup() { # <database> <schema subdirectory>
  db="$1"
  dir="$SCHEMA_ROOT/$2/versioned"
  # `create` fails when the database already exists; that is the normal case on every start after
  # the first. A real connection problem makes setup-schema fail just below, so nothing is hidden.
  if temporal-sql-tool --db "$db" create-database; then
    echo "created database $db"
  else
    echo "database $db not created (it probably exists already); continuing"
  fi
  temporal-sql-tool --db "$db" setup-schema -v 0.0
  temporal-sql-tool --db "$db" update-schema -d "$dir"
  echo "schema of $db is up to date"
}

setup temporal temporal
setup temporal_visibility visibility
echo "Temporal PostgreSQL schema setup complete"

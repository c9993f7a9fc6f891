#!/bin/sh
# One-shot job (temporalio/admin-tools): register custom search attributes in a namespace.
#   register-search-attributes.sh Name=Type [Name=Type ...]
# Idempotent: an attribute that already exists with the same type is left alone (some server
# versions refuse to re-add one, so each attribute is looked up before it is created). An attribute
# that exists with a DIFFERENT type is an error: the job fails rather than hide the conflict.
#   TEMPORAL_ADDRESS (temporal:7233), TEMPORAL_NAMESPACE (default)
set -eu

ADDRESS="${TEMPORAL_ADDRESS:-temporal:7233}"
NAMESPACE="${TEMPORAL_NAMESPACE:-default}"
ATTEMPTS="${WAIT_ATTEMPTS:-60}"
SLEEP="${WAIT_SECONDS:-2}"

if [ "$#" -eq 0 ]; then
  echo "usage: $0 Name=Type [Name=Type ...]" >&2
  exit 2
fi

# "Keyword", "KEYWORD" and "INDEXED_VALUE_TYPE_KEYWORD" all mean the same type.
normalize() {
  printf '%s' "$1" | tr '[:upper:]' '[:lower:]' | sed -e 's/^indexed_value_type_//' -e 's/_//g'
}

# Prints the type the namespace has for attribute $1, or nothing. Fails if the list fails.
# Reads `-o json` ({"customAttributes": {"Name": "INDEXED_VALUE_TYPE_KEYWORD", ...},
# "systemAttributes": {...}}), not the human table, whose layout is not a contract. No jq in the
# admin-tools image: split the JSON at , { } so that each "Name": "TYPE" pair is on its own line.
current_type() {
  listing=$(temporal operator search-attribute list --namespace "$NAMESPACE" --address "$ADDRESS" -o json) || return 1
  printf '%s\n' "$listing" | tr ',{}' '\n\n\n' |
    sed -n 's/^[[:space:]]*"'"$1"'"[[:space:]]*:[[:space:]]*"\([A-Za-z_]*\)".*$/\1/p' | head -n 1
}

i=1
until temporal operator cluster health --address "$ADDRESS" >/dev/null 2>&1; do
  if [ "$i" -ge "$ATTEMPTS" ]; then
    echo "Temporal at $ADDRESS was not healthy after $ATTEMPTS attempts" >&2
    exit 1
  fi
  i=$((i + 1))
  sleep "$SLEEP"
done

for spec in "$@"; do
  name="${spec%%=*}"
  type="${spec#*=}"
  if [ -z "$name" ] || [ -z "$type" ] || [ "$name" = "$spec" ]; then
    echo "bad argument '$spec': expected Name=Type" >&2
    exit 2
  fi
  i=1
  while :; do
    if have=$(current_type "$name"); then
      if [ -n "$have" ]; then
        if [ "$(normalize "$have")" = "$(normalize "$type")" ]; then
          echo "search attribute $name ($type) is registered in namespace $NAMESPACE"
          break
        fi
        echo "search attribute $name exists in namespace $NAMESPACE with type $have, not $type" >&2
        exit 1
      fi
      temporal operator search-attribute create --namespace "$NAMESPACE" --address "$ADDRESS" --name "$name" --type "$type" || true
      # Loop round: the next lookup confirms the create (or sees a concurrent one).
    fi
    if [ "$i" -ge "$ATTEMPTS" ]; then
      echo "could not register search attribute $name ($type) after $ATTEMPTS attempts" >&2
      exit 1
    fi
    i=$((i + 1))
    sleep "$SLEEP"
  done
done
echo "search attributes registered: $*"

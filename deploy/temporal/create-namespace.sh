#!/bin/sh
# One-shot job (temporalio/admin-tools): wait until the Temporal cluster answers, then make sure
# the namespace warden uses exists. Idempotent: an existing namespace is left as it is.
#   TEMPORAL_ADDRESS (temporal:7233), TEMPORAL_NAMESPACE (default),
#   TEMPORAL_NAMESPACE_RETENTION (7d; applies to closed workflows, only when creating)
set -eu

ADDRESS="${TEMPORAL_ADDRESS:-temporal:7233}"
NAMESPACE="${TEMPORAL_NAMESPACE:-default}"
RETENTION="${TEMPORAL_NAMESPACE_RETENTION:-7d}"
ATTEMPTS="${WAIT_ATTEMPTS:-60}"
SLEEP="${WAIT_SECONDS:-2}"

i=1
until temporal operator cluster health --address "$ADDRESS" >/dev/null 2>&1; do
  if [ "$i" -ge "$ATTEMPTS" ]; then
    echo "Temporal at $ADDRESS was not healthy after $ATTEMPTS attempts" >&2
    exit 1
  fi
  i=$((i + 1))
  sleep "$SLEEP"
done
echo "Temporal at $ADDRESS is healthy"

i=1
while :; do
  if temporal operator namespace describe --namespace "$NAMESPACE" --address "$ADDRESS" >/dev/null 2>&1; then
    echo "namespace $NAMESPACE exists"
    exit 0
  fi
  if temporal operator namespace create --namespace "$NAMESPACE" --retention "$RETENTION" --address "$ADDRESS"; then
    echo "namespace $NAMESPACE created (retention $RETENTION)"
    exit 0
  fi
  if [ "$i" -ge "$ATTEMPTS" ]; then
    echo "could not create namespace $NAMESPACE after $ATTEMPTS attempts" >&2
    exit 1
  fi
  i=$((i + 1))
  sleep "$SLEEP"
done

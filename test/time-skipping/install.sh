#!/usr/bin/env bash
# Install Temporal's time-skipping test server (Java, from Maven Central) into warden's cache and
# print the path of the script that runs it. Needs java (17+) and mvn. Idempotent: a second run
# only prints the path. test/helpers/time-skipping.ts runs the printed script.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
version="$(sed -n 's:.*<version>\(1\.[0-9.]*\)</version>.*:\1:p' "$here/pom.xml" | head -1)"
dir="${XDG_CACHE_HOME:-$HOME/.cache}/warden/temporal-test-server-$version"
if [ ! -x "$dir/temporal-test-server" ]; then
  rm -rf "$dir.partial" && mkdir -p "$dir.partial"
  mvn -q -B -Dstyle.color=never -f "$here/pom.xml" dependency:copy-dependencies -DoutputDirectory="$dir.partial/lib" >&2
  # The SDK starts the server as `<executable> <port> [flags]`, as it does its own native build.
  cat >"$dir.partial/temporal-test-server" <<'SH'
#!/bin/sh
exec java -Xmx512m -cp "$(dirname "$0")/lib/*" io.temporal.testserver.TestServer "$@"
SH
  chmod +x "$dir.partial/temporal-test-server"
  rm -rf "$dir" && mv "$dir.partial" "$dir"
fi
echo "$dir/temporal-test-server"

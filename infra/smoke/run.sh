#!/usr/bin/env bash
# Runs smoke.mjs against a built sheaf binary over stdio and over Streamable
# HTTP (with a bearer token), each on a fresh copy of the sample vault.
# Usage: SHEAF_BIN=/path/to/sheaf infra/smoke/run.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${SHEAF_BIN:?set SHEAF_BIN to the sheaf binary}"
tmp="$(mktemp -d)"
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

cp -R "$here/../sample-vault" "$tmp/stdio-vault"
cp -R "$here/../sample-vault" "$tmp/http-vault"
token="smoke-$RANDOM$RANDOM"

# Port 0: the server picks a free loopback port and logs its URL.
"$bin" serve --vault "$tmp/http-vault" --http 127.0.0.1:0 --token "$token" 2>"$tmp/http.log" &
pid=$!
url=""
for _ in $(seq 1 200); do
  url="$(grep -o 'http://127.0.0.1:[0-9]*/mcp' "$tmp/http.log" | head -n 1 || true)"
  [ -n "$url" ] && break
  sleep 0.05
done
[ -n "$url" ] || { cat "$tmp/http.log"; echo "sheaf serve --http did not start"; exit 1; }

SHEAF_BIN="$bin" SHEAF_VAULT="$tmp/stdio-vault" SHEAF_HTTP_URL="$url" SHEAF_HTTP_TOKEN="$token" \
  node "$here/smoke.mjs"

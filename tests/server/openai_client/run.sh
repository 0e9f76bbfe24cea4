#!/usr/bin/env bash
# Runs check.mjs (the official npm `openai` client) against a cortiq-server started here on an
# ephemeral port. Needs node/npm and the npm registry; installs `openai` in a temporary directory
# that is removed afterwards. Not part of ctest.
#   tests/server/openai_client/run.sh build/bin/cortiq-server MODEL.cortiq [server flags...]
set -euo pipefail
server=$1; model=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
log=$tmp/server.log
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
(cd "$tmp" && npm init -y >/dev/null && npm install --silent openai >/dev/null)
echo "openai $(node -p "require('$tmp/node_modules/openai/package.json').version")"
"$server" "$model" --port 0 --parallel 4 --api-key check-key "$@" 2>"$log" &
pid=$!
for _ in $(seq 100); do grep -q "listening on" "$log" && break; sleep 0.1; done
url=$(grep -o 'http://[0-9.]*:[0-9]*' "$log")
cp "$here/check.mjs" "$tmp/check.mjs"
node "$tmp/check.mjs" "$url/v1"

#!/usr/bin/env bash
# Point the official OpenAI Node SDK (from npm) at `swarm mock serve` and
# check a json_schema completion, a streamed completion with usage,
# /v1/models, and a tool-calling loop (tools offered, the returned
# tool_calls run against an in-memory stub workspace, tool results sent
# back, a final answer in the atom schema whose citations are checked
# against the stub's lines). Needs node and npm; not part of CI (CI reaches only the Go
# module proxy). Usage: scripts/sdk-check-node.sh
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'kill "${pid:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/swarm" ./cmd/swarm
(cd "$work" && npm init -y >/dev/null && npm install --silent openai@4 >/dev/null)
cp scripts/sdk-node/check.mjs "$work/"
port=$((20000 + RANDOM % 20000))
"$work/swarm" mock serve --addr "127.0.0.1:$port" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null && break; sleep 0.1; done
BASE_URL="http://127.0.0.1:$port/v1" node "$work/check.mjs"

#!/usr/bin/env bash
# Point the official OpenAI Node SDK (openai 4.104.0 and zod 3.25.76 from
# npm, pinned with their dependencies in scripts/sdk-node/package-lock.json)
# at `swarm mock serve` and check (scripts/sdk-node/check.mjs): a json_schema
# completion, streaming with usage (raw and through the SDK's stream helper),
# /v1/models and /v1/models/{id}, a tool-calling loop over swarm's workspace
# tools (results run against an in-memory stub workspace, the final atom's
# citations checked against its lines), runTools() with the client's own
# tools (plain and streamed), parse() with a zod and a json_schema
# response_format and with a named zod tool, tool_choice required, named and
# none, parallel_tool_calls false, n=2, and the 400/404 errors the official
# API gives. Needs go, node (18 or later), npm with a reachable registry and
# curl; a missing one fails the check. Part of .ci/run.
# Usage: scripts/sdk-check-node.sh
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in go node npm curl; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "sdk-check-node: FAILED: $tool is not installed (the check needs go, node 18+, npm and curl)" >&2
		exit 1
	fi
done
if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)'; then
	echo "sdk-check-node: FAILED: node $(node --version) is too old (the OpenAI SDK needs 18 or later)" >&2
	exit 1
fi
work=$(mktemp -d)
trap 'kill "${pid:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/swarm" ./cmd/swarm
cp scripts/sdk-node/package.json scripts/sdk-node/package-lock.json scripts/sdk-node/check.mjs "$work/"
if ! (cd "$work" && npm ci --silent --no-audit --no-fund >"$work/npm.log" 2>&1); then
	cat "$work/npm.log" >&2
	echo "sdk-check-node: FAILED: npm ci (is the npm registry reachable?)" >&2
	exit 1
fi
port=$((20000 + RANDOM % 20000))
"$work/swarm" mock serve --addr "127.0.0.1:$port" >"$work/serve.log" 2>&1 &
pid=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null && break; sleep 0.1; done
if ! curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null; then
	cat "$work/serve.log" >&2
	echo "sdk-check-node: FAILED: swarm mock serve did not answer on 127.0.0.1:$port" >&2
	exit 1
fi
BASE_URL="http://127.0.0.1:$port/v1" node "$work/check.mjs"

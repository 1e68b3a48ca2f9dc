#!/usr/bin/env bash
# Open compare.html in headless Chromium with the network off, take a
# screenshot, and check it is not blank (needs Debian's chromium:
# apt-get install chromium). Usage: scripts/screenshot-compare.sh DIR/compare.html [OUT.png]
set -euo pipefail
html=$(readlink -f "${1:?usage: $0 compare.html [out.png]}")
png=${2:-${html%.html}.png}
browser=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
[ -n "$browser" ] || { echo "no chromium found (apt-get install chromium)" >&2; exit 2; }
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --proxy-server=127.0.0.1:9 --proxy-bypass-list='<-loopback>' \
  --user-data-dir="$profile" --window-size=1280,2000 --hide-scrollbars \
  --screenshot="$png" "file://$html" >/dev/null 2>&1
go run ./scripts/pngcheck "$png"

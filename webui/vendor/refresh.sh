#!/bin/sh
# Refreshes the vendored Chart.js from the npm registry. Run by hand when
# upgrading; the build and the server never touch the network.
#   webui/vendor/refresh.sh [VERSION]     (default: the version pinned below)
set -eu
VERSION="${1:-4.6.1}"
HERE="$(cd "$(dirname "$0")" && pwd)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
cd "$TMP"
npm init -y >/dev/null
npm install --no-audit --no-fund --ignore-scripts "chart.js@$VERSION" >/dev/null
PKG="$TMP/node_modules/chart.js"
cp "$PKG/dist/chart.umd.min.js" "$HERE/chart.umd.min.js"
cp "$PKG/LICENSE.md" "$HERE/chart.js-LICENSE.md"
# chart.umd.min.js ends with a sourceMappingURL comment; the map is not
# vendored, so drop the comment to keep the browser from asking for it.
sed -i '/^\/\/# sourceMappingURL=/d' "$HERE/chart.umd.min.js"
node -e 'console.log(require(process.argv[1]).version)' "$PKG/package.json" > "$HERE/chart.js-VERSION"
echo "vendored chart.js $(cat "$HERE/chart.js-VERSION") into $HERE"

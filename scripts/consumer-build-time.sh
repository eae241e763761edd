#!/usr/bin/env bash
# Clean debug build time of a package that uses MainLoop, as a user's would:
#   bash scripts/consumer-build-time.sh [BASELINE_COMMIT]
# Builds three consumers of clones of this repository, interleaved, twice:
#   before  products MainLoop + LinuxSystemEvents of BASELINE_COMMIT (default: HEAD)
#   after   the same products of HEAD
#   optin   HEAD's MainLoop + LinuxSystemEvents + MainLoopServiceLifecycle + MainLoopMetrics
# Resolution is done before the clock starts; only `swift build` is timed.
set -euo pipefail
repository=$(cd "$(dirname "$0")/.." && pwd)
baseline=${1:-HEAD}
work=$(mktemp -d /tmp/mainloop-buildtime-XXXXXX)
trap 'rm -rf "$work"' EXIT
git clone -q "$repository" "$work/before" && git -C "$work/before" checkout -q "$baseline"
git clone -q "$repository" "$work/after"
consumer() {  # NAME PACKAGE PRODUCTS...
  local name=$1 package=$2
  shift 2
  mkdir -p "$work/consumer-$name/Sources/Consumer"
  local products=""
  for product in "$@"; do products+=".product(name: \"$product\", package: \"$package\"), "; done
  cat >"$work/consumer-$name/Package.swift" <<SWIFT
// swift-tools-version: 6.1
import PackageDescription
let package = Package(name: "Consumer", dependencies: [.package(path: "../$package")],
                      targets: [.executableTarget(name: "Consumer", dependencies: [$products])])
SWIFT
  printf 'import MainLoop\nimport LinuxSystemEvents\nlet loop = try MainRunLoop()\nprint(loop.now)\n' \
    >"$work/consumer-$name/Sources/Consumer/main.swift"
}
consumer before before MainLoop LinuxSystemEvents
consumer after after MainLoop LinuxSystemEvents
consumer optin after MainLoop LinuxSystemEvents MainLoopServiceLifecycle MainLoopMetrics
for round in 1 2; do
  for name in before after optin; do
    rm -rf "$work/consumer-$name/.build"
    (cd "$work/consumer-$name" && swift package resolve >/dev/null 2>&1)
    start=$(date +%s.%N)
    (cd "$work/consumer-$name" && swift build >/dev/null 2>&1) || echo "$name: build failed"
    echo "round $round $name: $(echo "$(date +%s.%N) - $start" | bc | cut -c1-5) s"
  done
done

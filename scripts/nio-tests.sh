#!/usr/bin/env bash
# MainLoopNIO judged by SwiftNIO's own tests, then by ours.
#
# Copies SwiftNIO's generic event-loop tests from the swift-nio checkout the
# NIOTests package resolved into NIOTests/Tests/NIOGenericTests/Copied/
# (ignored by git: SwiftNIO's files are never committed here), rewriting
# only how a loop is made (see scripts/nio-tests-rewrite.py), then runs the
# NIOTests package: those tests and our own MainLoopNIO tests.
# Usage: bash scripts/nio-tests.sh [build options for both `swift build` and
#        `swift test`, e.g. --sanitize=thread --scratch-path NIOTests/.build-tsan]
set -euo pipefail
cd "$(dirname "$0")/.."
swift package --package-path NIOTests resolve
checkout=NIOTests/.build/checkouts/swift-nio
test -d "$checkout/Tests/NIOPosixTests" || { echo "error: no swift-nio checkout at $checkout" >&2; exit 1; }
/usr/bin/python3 scripts/nio-tests-rewrite.py "$checkout/Tests/NIOPosixTests" NIOTests/Tests/NIOGenericTests/Copied
swift build --package-path NIOTests --build-tests "$@"
swift test --package-path NIOTests --skip-build "$@"

#!/usr/bin/env bash
# Sets up a fresh machine and runs every check CI runs:
#   1. the conformance scenarios through the CLI (`mainloop replay --check`),
#      the project's copies and ../shared/conformance when it is beside us;
#   2. the cross-thread tests under ThreadSanitizer;
#   3. the whole test suite (`swift test`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

swift build --build-tests
echo "== conformance scenarios through the CLI"
.build/debug/mainloop replay --check Tests/ScenarioReplayTests/Conformance/*.json
if [ -d ../shared/conformance ]; then
  .build/debug/mainloop replay --check ../shared/conformance/*.json
fi

echo "== cross-thread tests under ThreadSanitizer"
swift test --sanitize=thread --scratch-path .build-tsan \
  --filter 'MainLoopTests|SystemNotificationsTests.ObserverTests|EngineOrderingTests|ControlSocketTests|SocketOrderingRegressionTests'

echo "== the whole suite"
swift test

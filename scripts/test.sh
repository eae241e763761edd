#!/usr/bin/env bash
# Sets up a fresh machine and runs every check CI runs:
#   1. the conformance scenarios through the CLI (`mainloop replay --check`),
#      the project's copies and ../shared/conformance when it is beside us;
#   2. the cross-thread tests under ThreadSanitizer;
#   3. the allocation gate: the ordo-one benchmark suites, each against its
#      exact steady-state malloc count (Benchmarks/Thresholds);
#   4. the whole test suite (`swift test`), last, so its summary closes the run.
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
  --filter 'MainLoopTests|SystemNotificationsTests.ObserverTests|EngineOrderingTests|ControlSocketTests|SocketOrderingRegressionTests|MainQueueTests|AsyncStreamTests|OffLoopReleaseTests'

echo "== allocation gate (ordo-one suites against Benchmarks/Thresholds)"
bash Benchmarks/scripts/check-thresholds.sh

echo "== the whole suite"
swift test

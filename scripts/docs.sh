#!/usr/bin/env bash
# Builds the DocC documentation of every public module as one combined archive
# (swift-docc-plugin) and fails on any warning: an unresolved link or an
# undocumented parameter is a defect, like a failing test.
#   bash scripts/docs.sh   ->  .build/plugins/Swift-DocC/outputs/MainLoop.doccarchive
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(MainLoop MainLoopJSON SystemNotifications AppLifecycle EngineWire ScenarioReplay FileSupport ServiceLogging
         ControlSocket LinuxSystemEvents SystemBus ServiceKit MainLoopKit
         MainLoopMetrics MainLoopServiceLifecycle MainLoopNIO MainLoopGLib)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
swift package generate-documentation --enable-experimental-combined-documentation \
  "${targets[@]/#/--target=}" >"$log" 2>&1 || { cat "$log"; exit 1; }
warnings=$(grep -c 'warning:' "$log" || true)
if [ "$warnings" -ne 0 ]; then
  grep -A3 'warning:' "$log"
  echo "error: DocC reported $warnings warnings" >&2
  exit 1
fi
grep -A1 'Generated combined documentation archive' "$log" | tail -1
echo "documentation: ${#targets[@]} modules, no warnings"

#!/usr/bin/env bash
# Sets up a fresh machine and runs every check CI runs:
#   1. the conformance scenarios through the CLI (`mainloop replay --check`),
#      the project's copies and ../shared/conformance when it is beside us;
#   2. the cross-thread tests under ThreadSanitizer, built from a copy
#      without `@exclusivity(unchecked)` so every exclusivity check runs;
#   2b. MainLoopNIO against SwiftNIO's own event-loop tests and ours
#      (scripts/nio-tests.sh, the NIOTests package), plain and under
#      ThreadSanitizer;
#   3. the examples in Examples/, built and run: the heartbeat service, the supervisor, the
#      NIO bridge, the GLib bridge (GDBus on a private dbus-daemon), the loop driven by a
#      GMainLoop, and the template service under systemd-socket-activate driven by
#      `mainloop ctl`; the static binary to deploy (scripts/build-static.sh),
#      its start-up functions side by side (scripts/check-startup-layout.py),
#      run through the tool's own tests; then every Swift snippet of the README, docs/
#      and the DocC guides, compiled;
#   4. the request-decoder fuzzer (Fuzz/), 60 s from the committed corpus,
#      in the background beside steps 5 and 6 (it keeps one core busy for
#      its minute; they use the other);
#   5. the allocation gate: the ordo-one benchmark suites, each against its
#      exact steady-state malloc count (Benchmarks/Thresholds);
#   6. the DocC documentation of every public module, with no warning;
#   7. the whole test suite (`swift test`), last, so its summary closes the run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

# A step's title, with the time the run has taken so far: a slow step shows
# in the log.
step() { printf '== [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

# Every process descended from PID, found through parent links (`ps
# --ppid`), whatever session it runs in.
descendants() {
  local child
  for child in $(ps -o pid= --ppid "$1"); do
    echo "$child"
    descendants "$child"
  done
}

# Runs a test command with a time limit, so a hang fails the run at once,
# naming the step, instead of at CI's limit. At the limit a watchdog kills
# the step and every process it started, by PID (exit-test children run in
# sessions of their own, out of a process group's reach); nothing else on
# the machine, such as another checkout's test run, is touched.
bounded() {
  local limit=$1 status=0
  shift
  "$@" &
  local step=$!
  (
    sleep "$limit"
    echo "error: '$*' did not finish within $limit (a hang)" >&2
    kill -9 $(descendants "$step") "$step" 2>/dev/null || true
  ) </dev/null >/dev/null &
  local watchdog=$!
  wait "$step" || status=$?
  kill $(descendants "$watchdog") "$watchdog" 2>/dev/null || true
  wait "$watchdog" 2>/dev/null || true
  return "$status"
}

swift build --build-tests
step "conformance scenarios through the CLI"
.build/debug/mainloop replay --check Tests/ScenarioReplayTests/Conformance/*.json
if [ -d ../shared/conformance ]; then
  .build/debug/mainloop replay --check ../shared/conformance/*.json
fi

step "cross-thread tests under ThreadSanitizer, with every exclusivity check on (scripts/exclusivity-checked-copy.sh)"
checked=$(bash scripts/exclusivity-checked-copy.sh)
bounded 15m swift test --package-path "$checked" --sanitize=thread --scratch-path "$PWD/.build-tsan" \
  --filter 'MainLoopTests|SystemNotificationsTests.ObserverTests|EngineOrderingTests|ControlSocketTests|SocketOrderingRegressionTests|MainQueueTests|AsyncStreamTests|OffLoopReleaseTests|BoundedOutputPumpTests|SystemdIntegrationTests|ServicePartsTests|SystemBusSourcesTests|MainLoopGLibTests|SessionRecorderTests'

step "MainLoopNIO judged by SwiftNIO's own tests (copied at test time) and ours"
bounded 15m bash scripts/nio-tests.sh
step "the same under ThreadSanitizer (one known false positive of Swift's continuations suppressed: NIOTests/tsan-suppressions.txt)"
TSAN_OPTIONS="suppressions=$PWD/NIOTests/tsan-suppressions.txt" \
  bounded 15m bash scripts/nio-tests.sh --sanitize=thread --scratch-path NIOTests/.build-tsan

step "the examples (Examples/): the heartbeat service runs 2 s, merges, stops cleanly"
swift build --package-path Examples
example=$(bounded 1m Examples/.build/debug/heartbeat-service --seconds 2)
echo "$example"
grep -q 'orientationDidChange "landscapeRight" (merged from 3)' <<<"$example"
grep -q 'stopped cleanly' <<<"$example"

step "the supervisor: children on pidfds, rate-limited restarts, a log flushed before waiting, exit handlers"
supervisor=$(bounded 1m Examples/.build/debug/supervisor)
echo "$supervisor"
diff <(echo "$supervisor") - <<'EXPECTED'
supervisor: started steady and flaky #1
flaky #1 killed by signal 9 (Killed)
flaky #2 started (restart 1, at once)
flaky #2 killed by signal 9 (Killed)
flaky #3 started (restart 2, at once)
flaky #3 killed by signal 9 (Killed)
flaky #4 started (restart 3, at once)
flaky #4 killed by signal 9 (Killed)
flaky #5 started (restart 4, held by the rate limit until its window ended)
flaky #5 killed by signal 9 (Killed)
SIGTERM: stopping
exit handler: SIGTERM sent to the children still running
steady killed by signal 15 (Terminated)
stopped cleanly
EXPECTED

step "the NIO bridge: a NIO server answered by app code on the main loop, held while suspended"
bridge=$(bounded 1m Examples/.build/debug/nio-bridge)
echo "$bridge"
diff <(echo "$bridge") - <<'EXPECTED'
reply: 1: hello (answered on the main loop: true)
app state: suspended
after 200 ms suspended: 1 reply so far
reply: 2: sent while suspended (answered on the main loop: true)
app state when it came: active
NIO shut down, 2 replies
stopped cleanly
EXPECTED

step "the GLib bridge: GDBus, a D-Bus signal and a GLib timeout on the main thread beside MainLoop's work"
# A private session bus of its own, stopped by its PID.
bus_dir=$(mktemp -d)
dbus-daemon --session --fork --address="unix:path=$bus_dir/bus" --print-pid=1 >"$bus_dir/pid"
glib_bridge=$(bounded 1m Examples/.build/debug/glib-bridge "unix:path=$bus_dir/bus") || { kill "$(cat "$bus_dir/pid")"; exit 1; }
kill "$(cat "$bus_dir/pid")"
rm -rf "$bus_dir"
echo "$glib_bridge"
# GLib and MainLoop callbacks interleave by timing; each runs on the main thread.
diff <(LC_ALL=C sort <<<"$glib_bridge") - <<'EXPECTED'
@MainActor task on the main thread
GDBus reply to GetId on the main thread
GDBus reply to RequestName on the main thread
GDBus signal NameOwnerChanged(org.mainloop.GLibBridge) on the main thread
GLib timeout on the main thread
MainLoop timer on the main thread
stopped cleanly
EXPECTED

step "the foreign driver: MainLoop's timers, a channel and an app inside a GMainLoop"
foreign=$(bounded 1m Examples/.build/debug/foreign-driver)
echo "$foreign"
diff <(echo "$foreign") - <<'EXPECTED'
app active, inside GLib's loop
channel: posted from another thread
app timer ticked twice while active
app suspended (by a GLib timeout)
app timer ticks while suspended: 0
app active (by a GLib timeout)
app timer ticked again after the resume: true
stopped cleanly
EXPECTED

step "the template service under systemd-socket-activate, driven by mainloop ctl"
bounded 2m bash scripts/check-template-service.sh

step "the binary to deploy (scripts/build-static.sh: one static executable), judged by the tool's own tests"
# Every test that runs the tool, against the static binary, except the
# umockdev one: umockdev works by LD_PRELOAD, which a static binary does not
# honour (the device source itself is the same code the debug build runs).
static_tool=$(bounded 15m bash scripts/build-static.sh)
/usr/bin/python3 scripts/check-startup-layout.py "$static_tool"
MAINLOOP_TOOL="$static_tool" bounded 10m swift test --skip-build \
  --filter 'CommandLineTests|CLIMessageTests|SystemBusServiceTests|EndToEndTests|SystemdIntegrationTests|ControlSocketTests|HostileClientTests|MetricsExportTests'

step "the documentation's code compiles (README and DocC snippets, Swift 6 mode, warnings are errors)"
bounded 10m bash scripts/check-doc-snippets.sh

step "the control socket's request decoder under libFuzzer + ASan (60 s over Fuzz/Corpus), beside the next two steps"
# Its minute of fuzzing takes one core; the gate and DocC run meanwhile.
# Its output is shown, and its status counted, once they are done.
fuzz_log=$(mktemp)
bounded 10m bash Fuzz/run.sh 60 >"$fuzz_log" 2>&1 &
fuzz=$!
# A step that fails meanwhile ends the run: the fuzzer goes with it.
trap 'kill $(descendants "$fuzz") "$fuzz" 2>/dev/null || true' EXIT

step "allocation gate (ordo-one suites against Benchmarks/Thresholds)"
bash Benchmarks/scripts/check-thresholds.sh

step "documentation (DocC, every public module, warnings are errors)"
bounded 10m bash scripts/docs.sh

step "the fuzzer's result"
fuzz_status=0
wait "$fuzz" || fuzz_status=$?
trap - EXIT
cat "$fuzz_log"
rm -f "$fuzz_log"
if [ "$fuzz_status" -ne 0 ]; then
  echo "error: the fuzzer failed (status $fuzz_status)" >&2
  exit "$fuzz_status"
fi

step "the whole suite"
bounded 10m swift test

#!/usr/bin/env bash
# CI: the template service (Examples/, `template-service`) as systemd runs
# it: started by the real systemd-socket-activate on the first connection,
# with a notify socket and a watchdog; suspended and resumed through
# `mainloop ctl` while the system changes (orientation three times, a
# defaults file written by another process); one merged notification per
# kind on resume; Ctrl-Z/fg (SIGTSTP/SIGCONT) as home and foreground;
# READY, WATCHDOG and STOPPING; exit 0 on SIGTERM.
# Needs: swift build (mainloop) and swift build --package-path Examples.
set -euo pipefail
cd "$(dirname "$0")/.."
ctl=.build/debug/mainloop
service=Examples/.build/debug/template-service
work=$(mktemp -d "${TMPDIR:-/tmp}/template-service-XXXXXX")
listener_pid=""
activator_pid=""
cleanup() {
  # Only what this script started, by PID.
  [ -n "$activator_pid" ] && kill -9 "$activator_pid" 2>/dev/null || true
  [ -n "$listener_pid" ] && kill "$listener_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "error: $*" >&2
  echo "--- service output"; cat "$work/out" >&2 || true
  echo "--- service log"; cat "$work/err" >&2 || true
  echo "--- notifications to systemd"; cat "$work/notify.log" >&2 || true
  exit 1
}
# Waits up to $1 seconds for the command after it to succeed.
wait_for() {
  local limit=$1; shift
  local deadline=$((SECONDS + limit))
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.05
  done
}

/usr/bin/python3 scripts/notify-listener.py "$work/notify.sock" "$work/notify.log" &
listener_pid=$!
wait_for 10 grep -q listening "$work/notify.log" 2>/dev/null || fail "the notify listener did not start"
printf 'LANG=en_US.UTF-8\n' >"$work/locale"
printf '{"volume": 3}' >"$work/defaults.json"
activator=$(command -v systemd-socket-activate || echo /usr/bin/systemd-socket-activate)
"$activator" -l "$work/control.sock" --fdname=control \
  -E NOTIFY_SOCKET="$work/notify.sock" -E WATCHDOG_USEC=400000 -E MEMORY_PRESSURE_WATCH=/dev/null \
  "$service" --defaults-file "$work/defaults.json" --locale-file "$work/locale" --zone-file "$work/localtime" \
  >"$work/out" 2>"$work/err" &
activator_pid=$!  # systemd-socket-activate execs the service: the same PID
wait_for 10 test -S "$work/control.sock" || fail "systemd-socket-activate did not listen"

c() { "$ctl" ctl --socket "$work/control.sock" "$@"; }
# The first connection starts the service on the passed socket.
c state | grep -q '"active"' || fail "the service did not answer 'state' with active"
wait_for 10 grep -q "^READY=1" "$work/notify.log" || fail "no READY=1"
wait_for 10 grep -q "^WATCHDOG=1" "$work/notify.log" || fail "no WATCHDOG=1 (WATCHDOG_USEC=400000)"
c home | grep -q '"suspended"' || fail "home did not suspend the app"
c system orientation landscapeLeft >/dev/null
c system orientation portrait >/dev/null
c system orientation landscapeRight >/dev/null
printf '{"volume": 7}' >"$work/defaults.json.new" && mv "$work/defaults.json.new" "$work/defaults.json"
# The file watch saw the write: the defaults change is held too.
defaults_held() {
  c query stats | /usr/bin/python3 -c 'import json, sys; sys.exit(0 if json.load(sys.stdin)["kinds"]["userDefaults"]["held"] >= 1 else 1)'
}
wait_for 10 defaults_held || fail "the defaults change was not held (stats: $(c query stats))"
c foreground | grep -q '"active"' || fail "foreground did not bring the app back"
c input tap >/dev/null
wait_for 10 grep -q "app: input tap" "$work/out" || fail "the input did not reach the app"
metrics=$(c metrics) || fail "the metrics query failed"
grep -q "mainloop_notifications_total" <<<"$metrics" || fail "the metrics query did not answer Prometheus text"

# Ctrl-Z and fg: SIGTSTP sends the app home and stops the process; a
# change made while it is stopped arrives merged after SIGCONT.
stopped() { [ "$(awk '{print $3}' "/proc/$activator_pid/stat")" = T ]; }
kill -TSTP "$activator_pid"
wait_for 10 stopped || fail "SIGTSTP did not stop the process"
printf '{"volume": 9}' >"$work/defaults.json.new" && mv "$work/defaults.json.new" "$work/defaults.json"
kill -CONT "$activator_pid"
wait_for 10 grep -q 'userDefaultsDidChange {"changed":{"volume":9}}' "$work/out" || fail "no defaults change after SIGCONT"
c state | grep -q '"active"' || fail "SIGCONT did not bring the app back"

kill -TERM "$activator_pid"
status=0
wait "$activator_pid" || status=$?
activator_pid=""
[ "$status" -eq 0 ] || fail "the service exited $status on SIGTERM, not 0"
wait_for 5 grep -q "^STOPPING=1" "$work/notify.log" || fail "no STOPPING=1"

out=$(cat "$work/out")
merged_orientation=$(grep -c 'notification: orientationDidChange {"orientation":"landscapeRight"} (merged from 3)' <<<"$out" || true)
[ "$merged_orientation" -eq 1 ] || fail "expected one merged orientation notification, got $merged_orientation"
grep -q 'notification: userDefaultsDidChange' <<<"$out" || fail "no userDefaults notification after the file changed"
[ "$(grep -c 'notification: orientationDidChange' <<<"$out")" -eq 1 ] || fail "an orientation notification was delivered while suspended"
# Merged notifications come before the input, after willEnterForeground.
order=$(grep -n -e 'app: coming back' -e 'notification: orientationDidChange' -e 'app: input tap' <<<"$out" | cut -d: -f1 | tr '\n' ' ')
[ "$order" = "$(tr ' ' '\n' <<<"$order" | grep . | sort -n | tr '\n' ' ')" ] || fail "out of order: $order"
grep -q "stopped cleanly" <<<"$out" || fail "no clean stop"
[ "$(grep -c 'app: coming back' <<<"$out")" -eq 2 ] || fail "expected two returns (ctl foreground, SIGCONT)"
echo "template-service: READY, WATCHDOG, suspend/resume with one merged notification per kind, STOPPING, exit 0"
echo "$out"

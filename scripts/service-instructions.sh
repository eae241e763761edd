#!/usr/bin/env bash
# Instructions per control-socket request on `mainloop run`'s loop thread,
# exactly (callgrind): the service runs under callgrind with collection off,
# a client sends WARM requests 16 in flight, collection is switched on for
# N more and off again, and the loop thread's count is divided by N.
# Requests: `events` (two orientations alternating, each a change, as
# Benchmarks/socket/run.sh sends them) or `state` (`{"query":"state"}`).
# Under callgrind fewer lines share a millisecond than at full speed, so
# the observation line's timestamp text is made more often than it is then.
# RECORD=1 runs the service with --record (what recording costs).
#   bash scripts/service-instructions.sh [events|state] [N] [MAINLOOP]
# MAINLOOP defaults to this checkout's release build (built if missing).

set -euo pipefail
kind=${1:-events}
count=${2:-3000}
warm=600
repo=$(cd "$(dirname "$0")/.." && pwd)
binary=${3:-}
if [ -z "$binary" ]; then
  swift build -c release --product mainloop --package-path "$repo" >/dev/null
  binary="$repo/.build/release/mainloop"
fi
work=$(mktemp -d)
service=""
cleanup() { [ -n "$service" ] && kill "$service" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
# callgrind cannot read Swift 6.3's DWARF 5: a copy without debug info.
objcopy --strip-debug "$binary" "$work/mainloop"
valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes ${CALLGRIND_OPTS:-} --callgrind-out-file="$work/cg.out" \
  "$work/mainloop" run --socket "$work/s" --defaults-file "$work/d.json" --locale-file "$work/locale" \
  --zone-file "$work/localtime" --no-system-bus --no-devices ${RECORD:+--record "$work/recording.jsonl" --record-limit 100000000000} \
  >/dev/null 2>"$work/err" &
service=$!
for _ in $(seq 600); do [ -S "$work/s" ] && break; sleep 0.1; done
[ -S "$work/s" ] || { echo "the service did not start:"; cat "$work/err"; exit 1; }
send() {
  /usr/bin/python3 - "$work/s" "$1" "$kind" <<'PY'
import socket, sys
path, total, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lines = ([b'{"system":{"orientation":"faceUp"}}\n', b'{"system":{"orientation":"portrait"}}\n']
         if kind == "events" else [b'{"query":"state"}\n'])
client = socket.socket(socket.AF_UNIX)
client.connect(path)
sent = answered = 0
while answered < total:
    while sent < total and sent - answered < 16:
        client.sendall(lines[sent % len(lines)])
        sent += 1
    data = client.recv(65536)
    if not data:
        sys.exit("the service closed the connection")
    if b'"error"' in data:
        sys.exit("the service answered an error: " + data.decode(errors="replace")[:200])
    answered += data.count(b"\n")
PY
}
send "$warm"
callgrind_control -i on "$service" >/dev/null 2>&1
send "$count"
callgrind_control -i off "$service" >/dev/null 2>&1
callgrind_control -d "$service" >/dev/null 2>&1
# The loop thread is the process's first (thread 1): its dump ends in -01.
total=$(grep -h "^totals:" "$work"/cg.out.1-01 | awk '{print $2}')
echo "$kind: $(( total / count )) instructions per request on the loop thread ($count requests after $warm)"
if [ -n "${KEEP:-}" ]; then cp "$work"/cg.out.1-01 "$KEEP"; echo "profile: $KEEP (callgrind_annotate it)"; fi

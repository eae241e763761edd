#!/usr/bin/env bash
# What recording costs on the event path: two `mainloop run` services
# (release build), one plain and one with --record, interleaved ROUNDS
# times, each sent pipelined events that each change something (1 client,
# 16 in flight, SECONDS each), as run.sh's events row. Prints each round's
# server CPU time per event (user + system, every thread, from /proc) and
# the recorded/plain ratio, then the medians (the goal: at most 1.3x).
#   bash Benchmarks/socket/recording.sh [ROUNDS] [SECONDS] [MAINLOOP]
set -euo pipefail
cd "$(dirname "$0")"
rounds=${1:-5}
seconds=${2:-2}
mainloop=${3:-../../.build/release/mainloop}
work=$(mktemp -d)
cc -O2 -o "$work/client" client.c -lpthread
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
start() {  # NAME EXTRA...
  local name=$1
  shift
  mkdir -p "$work/$name"
  "$mainloop" run --socket "$work/$name/s" --defaults-file "$work/$name/d.json" --locale-file "$work/$name/locale" \
    --zone-file "$work/$name/localtime" --no-system-bus --no-devices "$@" >/dev/null 2>"$work/$name/err" & pids+=($!)
}
start plain
# A limit the run cannot reach: every event is recorded.
start recorded --record "$work/recorded/session.jsonl" --record-limit 100000000000
for _ in $(seq 100); do [ -S "$work/plain/s" ] && [ -S "$work/recorded/s" ] && break; sleep 0.05; done
plain_pid=${pids[0]} recorded_pid=${pids[1]}
ticks=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
measure() {  # PID SOCKET: server CPU microseconds per event
  local pid=$1 before after out
  before=$(cpu_ticks "$pid")
  out=$("$work/client" "$2" 1 16 "$seconds" $'{"system":{"orientation":"faceUp"}}\n' $'{"system":{"orientation":"portrait"}}\n')
  after=$(cpu_ticks "$pid")
  echo "$out" | awk -v used=$((after - before)) -v ticks="$ticks" -v seconds="$seconds" \
    '{ printf "%.3f %d\n", used / ticks * 1e6 / ($4 * seconds), $4 }'
}
for round in $(seq "$rounds"); do
  read -r plain plain_rate < <(measure "$plain_pid" "$work/plain/s")
  read -r recorded recorded_rate < <(measure "$recorded_pid" "$work/recorded/s")
  echo "round $round: plain $plain us/event ($plain_rate/s), recorded $recorded us/event ($recorded_rate/s)," \
       "ratio $(awk -v a="$recorded" -v b="$plain" 'BEGIN { printf "%.2f", a / b }')"
done | tee "$work/results"
echo "recording: $(wc -c < "$work/recorded/session.jsonl") bytes"
/usr/bin/python3 - "$work/results" <<'PY'
import re, statistics, sys
rows = [re.findall(r"([\d.]+) us/event", line) + re.findall(r"ratio ([\d.]+)", line) for line in open(sys.argv[1])]
plain, recorded, ratio = (statistics.median(float(row[i]) for row in rows) for i in range(3))
print(f"median of {len(rows)} rounds: plain {plain:.3f} us/event, recorded {recorded:.3f} us/event, "
      f"ratio {ratio:.2f} (goal <= 1.3)")
PY

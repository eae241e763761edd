#!/usr/bin/env bash
# The control socket against its floor, interleaved, ROUNDS times:
# `{"query":"state"}` round trips at 1x1, 1x16 and 8x16 (clients x depth)
# and pipelined events that each change something, against `mainloop run`
# (release build) and a C libevent line server answering the same reply.
#   bash Benchmarks/socket/run.sh [ROUNDS] [SECONDS] [MAINLOOP]
set -euo pipefail
cd "$(dirname "$0")"
rounds=${1:-3}
seconds=${2:-2}
mainloop=${3:-../../.build/release/mainloop}
work=$(mktemp -d)
cc -O2 -o "$work/client" client.c -lpthread
cc -O2 -o "$work/floor" floor.c $(pkg-config --cflags --libs libevent)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
"$work/floor" "$work/floor.sock" & pids+=($!)
# The D-Bus and device sources off where the binary has them: the socket alone is measured.
extra=()
if "$mainloop" run --help 2>/dev/null | grep -q -- --no-system-bus; then extra=(--no-system-bus --no-devices); fi
"$mainloop" run --socket "$work/ml.sock" --defaults-file "$work/d.json" --locale-file "$work/locale" \
  --zone-file "$work/localtime" "${extra[@]}" >/dev/null 2>&1 & pids+=($!)
for _ in $(seq 100); do [ -S "$work/ml.sock" ] && [ -S "$work/floor.sock" ] && break; sleep 0.05; done
for round in $(seq "$rounds"); do
  echo "== round $round"
  for shape in "1 1" "1 16" "8 16"; do
    echo "mainloop $("$work/client" "$work/ml.sock" $shape "$seconds")"
    echo "floor    $("$work/client" "$work/floor.sock" $shape "$seconds")"
  done
  echo "mainloop events $("$work/client" "$work/ml.sock" 1 16 "$seconds" $'{"system":{"orientation":"faceUp"}}\n' $'{"system":{"orientation":"portrait"}}\n')"
done

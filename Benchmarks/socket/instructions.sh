#!/usr/bin/env bash
# Instructions the control socket's server spends per request, exactly
# (callgrind), for a checkout's release `mainloop`: one client, one request
# in flight (so every request costs one read and one write, whatever the
# machine's timing), N = 2,000 and 6,000 requests, the difference per
# request. KIND `query` sends `{"query":"state"}`, `events` alternates two
# orientations (each a change, printed through the output pump). Compare
# two checkouts to see what a change to the socket's path cost.
#   bash Benchmarks/socket/instructions.sh [REPO] [KIND...]     (default: query events)
set -euo pipefail
repo=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
shift || true
kinds=("${@:-query events}")
(cd "$repo" && swift build -c release --product mainloop >/dev/null)
work=$(mktemp -d)
server=
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
objcopy --strip-debug "$repo/.build/release/mainloop" "$work/mainloop"
cat > "$work/client.py" <<'PY'
import socket, sys
path, count, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lines = [b'{"query":"state"}\n'] if kind == "query" else \
        [b'{"system":{"orientation":"faceUp"}}\n', b'{"system":{"orientation":"portrait"}}\n']
connection = socket.socket(socket.AF_UNIX)
connection.connect(path)
replies = connection.makefile("rb")
for index in range(count):
    connection.sendall(lines[index % len(lines)])
    if not replies.readline():
        sys.exit("the server closed the connection")
PY
for kind in ${kinds[@]}; do
  counts=()
  for count in 2000 6000; do
    run="$work/run-$count"
    mkdir "$run"
    valgrind --tool=callgrind --callgrind-out-file="$run/cg.out" "$work/mainloop" run --socket "$run/s.sock" \
      --defaults-file "$run/d.json" --locale-file "$run/locale" --zone-file "$run/localtime" \
      --no-system-bus --no-devices >/dev/null 2>"$run/err" &
    server=$!
    for _ in $(seq 600); do [ -S "$run/s.sock" ] && break; sleep 0.1; done
    /usr/bin/python3 "$work/client.py" "$run/s.sock" "$count" "$kind"
    kill -TERM "$server"
    wait "$server" || true
    server=
    counts+=($(cat "$run"/cg.out* | grep -E "^(summary|totals):" | awk '{sum += $2} END {print sum}'))
    rm -rf "$run"
  done
  echo "$kind: $(( (counts[1] - counts[0]) / 4000 )) instructions per request"
done

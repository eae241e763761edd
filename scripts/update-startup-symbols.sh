#!/usr/bin/env bash
# Regenerates scripts/startup-symbols.txt: every function `mainloop run`
# executes from exec to READY=1 (and on its way out after a SIGTERM), on
# every thread, as valgrind's callgrind saw them, one mangled name per line,
# sorted. scripts/build-static.sh hands the list to the linker
# (`--symbol-ordering-file`), which places those functions side by side: a
# start-up then faults in 38 of the text's 64 KiB windows instead of 80.
# Run it after a change that moves start-up code (a stale list still links:
# names that no longer exist are skipped, and new functions are placed as
# they come), and commit the result. The service runs as measure.py runs it,
# with the D-Bus and device sources off (their start-up code is not listed),
# except that memory-pressure watching stays on, as under systemd (measure.py
# turns it off with MEMORY_PRESSURE_WATCH=/dev/null): its code is listed.
#
#   bash scripts/update-startup-symbols.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "update-startup-symbols: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
binary=$(bash scripts/build-static.sh)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# callgrind cannot read Swift 6.3's DWARF 5; the symbol table is all it needs.
objcopy --strip-debug "$binary" "$work/mainloop"
/usr/bin/python3 - "$work" <<'PY'
import os, signal, socket, subprocess, sys
work = sys.argv[1]
notify = os.path.join(work, 'notify')
listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
listener.bind(notify)
listener.settimeout(120)
command = ['valgrind', '--tool=callgrind', '--callgrind-out-file=' + os.path.join(work, 'callgrind.out'),
           '--dump-instr=no', '--compress-strings=no', '--compress-pos=no', '--demangle=no',
           os.path.join(work, 'mainloop'), 'run', '--socket', os.path.join(work, 's.sock'),
           '--defaults-file', os.path.join(work, 'd.json'), '--locale-file', os.path.join(work, 'locale'),
           '--zone-file', os.path.join(work, 'localtime'), '--no-system-bus', '--no-devices']
env = dict(os.environ, NOTIFY_SOCKET=notify)
service = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    while 'READY=1' not in listener.recv(4096).decode().split('\n'):
        pass
finally:
    # SIGTERM: the service stops cleanly and callgrind writes its profile.
    service.send_signal(signal.SIGTERM)
    if service.wait(timeout=120) != 0:
        sys.exit('update-startup-symbols: the service under callgrind exited with %d' % service.returncode)
PY
# callgrind marks a recursion level with 'N and names code without a symbol
# by its address or "(below main)": the linker needs symbols only.
grep '^fn=' "$work/callgrind.out" | sed -e 's/^fn=//' -e "s/'[0-9]*\$//" | grep -v '^(\|^0x' |
  LC_ALL=C sort -u > scripts/startup-symbols.txt
echo "scripts/startup-symbols.txt: $(wc -l < scripts/startup-symbols.txt) functions"

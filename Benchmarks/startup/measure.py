#!/usr/bin/env python3
"""Start-up and footprint of `mainloop run`: exec -> READY=1 (on a notify
socket of its own) and the resident set once ready, RUNS times each.

    /usr/bin/python3 Benchmarks/startup/measure.py BINARY [RUNS]

Prints the median and range of both. The D-Bus and device sources are off
(--no-system-bus --no-devices, where the binary has them), so the service
alone is measured."""
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

binary = sys.argv[1]
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 10
extra = []
if b'--no-system-bus' in subprocess.run([binary, 'run', '--help'], capture_output=True).stdout:
    extra = ['--no-system-bus', '--no-devices']
ready_ms, rss_kib = [], []
for _ in range(runs):
    work = tempfile.mkdtemp()
    notify = os.path.join(work, 'notify')
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(notify)
    listener.settimeout(10)
    env = dict(os.environ, NOTIFY_SOCKET=notify, MEMORY_PRESSURE_WATCH='/dev/null')
    start = time.monotonic()
    process = subprocess.Popen([binary, 'run', '--socket', os.path.join(work, 's.sock'),
                                '--defaults-file', os.path.join(work, 'd.json'), '--locale-file', os.path.join(work, 'locale'),
                                '--zone-file', os.path.join(work, 'localtime')] + extra,
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while True:
        message = listener.recv(4096).decode()
        if 'READY=1' in message.split('\n'):
            ready_ms.append((time.monotonic() - start) * 1000)
            break
    time.sleep(0.2)
    for line in open('/proc/%d/status' % process.pid):
        if line.startswith('VmRSS:'):
            rss_kib.append(int(line.split()[1]))
    process.terminate()
    process.wait(timeout=10)
    listener.close()
print('%s: exec -> READY=1 median %.1f ms (%.1f-%.1f), idle RSS median %.1f MiB (%.1f-%.1f), %d runs' % (
    os.path.basename(binary), statistics.median(ready_ms), min(ready_ms), max(ready_ms),
    statistics.median(rss_kib) / 1024, min(rss_kib) / 1024, max(rss_kib) / 1024, runs))

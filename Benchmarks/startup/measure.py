#!/usr/bin/env python3
"""Start-up and footprint: exec -> READY=1 (on a notify socket of its own)
and the resident set once ready, RUNS times for each binary, interleaved
(binary 1, binary 2, ..., binary 1, ...), so each sees the same machine.

    /usr/bin/python3 Benchmarks/startup/measure.py RUNS BINARY [BINARY ...]

`mainloop` binaries run `run` with the D-Bus and device sources off
(--no-system-bus --no-devices, where the binary has them), so the service
alone is measured; any other binary (the C floor, ready-floor.c) runs with
no arguments. Prints each binary's median and range, and each one's median
divided by the first's."""
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

runs = int(sys.argv[1])
binaries = sys.argv[2:]


# Per mainloop binary, asked once: the options that turn its D-Bus and
# device sources off, where it has them.
sources_off = {}
for binary in binaries:
    if 'mainloop' in os.path.basename(binary):
        help_text = subprocess.run([binary, 'run', '--help'], capture_output=True).stdout
        sources_off[binary] = ['--no-system-bus', '--no-devices'] if b'--no-system-bus' in help_text else []


def arguments(binary, work):
    if binary not in sources_off:
        return [binary]
    return [binary, 'run', '--socket', os.path.join(work, 's.sock'),
            '--defaults-file', os.path.join(work, 'd.json'), '--locale-file', os.path.join(work, 'locale'),
            '--zone-file', os.path.join(work, 'localtime')] + sources_off[binary]


def once(binary):
    """Milliseconds from exec to READY=1, and KiB resident once idle."""
    work = tempfile.mkdtemp()
    try:
        notify = os.path.join(work, 'notify')
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        listener.bind(notify)
        listener.settimeout(10)
        env = dict(os.environ, NOTIFY_SOCKET=notify, MEMORY_PRESSURE_WATCH='/dev/null')
        command = arguments(binary, work)
        start = time.monotonic()
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while True:
                message = listener.recv(4096).decode()
                if 'READY=1' in message.split('\n'):
                    ready = (time.monotonic() - start) * 1000
                    break
            time.sleep(0.2)
            rss = next(int(line.split()[1]) for line in open('/proc/%d/status' % process.pid)
                       if line.startswith('VmRSS:'))
        finally:
            process.terminate()
            process.wait(timeout=10)
            listener.close()
        return ready, rss
    finally:
        shutil.rmtree(work, ignore_errors=True)


samples = {binary: ([], []) for binary in binaries}
for _ in range(runs):
    for binary in binaries:
        ready, rss = once(binary)
        samples[binary][0].append(ready)
        samples[binary][1].append(rss)
first = statistics.median(samples[binaries[0]][0])
for binary in binaries:
    ready_ms, rss_kib = samples[binary]
    median = statistics.median(ready_ms)
    print('%s: exec -> READY=1 median %.1f ms (%.1f-%.1f), %.2fx the first; idle RSS median %.1f MiB (%.1f-%.1f), %d runs' % (
        binary, median, min(ready_ms), max(ready_ms), median / first,
        statistics.median(rss_kib) / 1024, min(rss_kib) / 1024, max(rss_kib) / 1024, runs))

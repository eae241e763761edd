#!/usr/bin/env python3
"""Start-up and footprint: exec -> READY=1 (on a notify socket of its own)
and the resident set once ready, RUNS times for each binary, interleaved
(binary 1, binary 2, ..., binary 1, ...), so each sees the same machine.

    /usr/bin/python3 Benchmarks/startup/measure.py [--as-written] RUNS BINARY [BINARY ...]

Each binary is measured as a copy in a directory of its own, in the state a
deployed binary is in after a reboot: copied (as an install copies it),
written to disk, dropped from the page cache (posix_fadvise), and read back by
execs that are not counted. The page-cache state of the same file changes its
start-up by 10-20 %: a copy just written started 1.1-1.2x faster than the
same copy read back from disk, and the file as the linker left it 1.10-1.21x
slower than a copy, with the same number of page faults. Measured where they
lay, two builds differed by their files' histories, not their code. Each copy
sits beside its original (a directory removed at the end), so it is on the
same file system, a disk and not a tmpfs /tmp. `--as-written` skips the
eviction: the state of a binary just installed, until the page cache lets it
go.

`mainloop` binaries run `run` with the D-Bus and device sources off
(--no-system-bus --no-devices, where the binary has them), so the service
alone is measured; any other binary (the C floor, ready-floor.c) runs with
no arguments. Prints each binary's median and range, and each one's median
divided by the first's."""
import atexit
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

arguments_given = sys.argv[1:]
as_written = '--as-written' in arguments_given
if as_written:
    arguments_given.remove('--as-written')
if len(arguments_given) < 2 or not arguments_given[0].isdigit() or int(arguments_given[0]) < 1:
    sys.exit('usage: measure.py [--as-written] RUNS BINARY [BINARY ...]  (RUNS a positive number)')
runs = int(arguments_given[0])
originals = arguments_given[1:]


def deployed_copy(original, directory):
    """`original` copied into `directory` under its own name, on disk, and
    (unless --as-written) out of the page cache."""
    os.mkdir(directory)
    copy = os.path.join(directory, os.path.basename(original))
    shutil.copy2(original, copy)
    descriptor = os.open(copy, os.O_RDONLY)
    try:
        os.fsync(descriptor)
        if not as_written:
            os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(descriptor)
    return copy


copy_directories = [os.path.join(os.path.dirname(os.path.abspath(original)), '.startup-copy-%d-%d' % (os.getpid(), index))
                    for index, original in enumerate(originals)]


@atexit.register
def remove_copies():
    """However the script ends (a failed copy, a failed run, Ctrl-C, done)."""
    for directory in copy_directories:
        shutil.rmtree(directory, ignore_errors=True)


binaries = [deployed_copy(original, directory) for original, directory in zip(originals, copy_directories)]
names = dict(zip(binaries, originals))


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


# Uncounted: the execs that read each copy back from disk.
for binary in binaries:
    once(binary)
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
        names[binary], median, min(ready_ms), max(ready_ms), median / first,
        statistics.median(rss_kib) / 1024, min(rss_kib) / 1024, max(rss_kib) / 1024, runs))

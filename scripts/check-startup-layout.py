#!/usr/bin/env python3
"""CI: the binary scripts/build-static.sh made has its start-up functions
side by side. Counts the 64 KiB windows of the text that hold the functions
scripts/startup-symbols.txt lists (the kernel maps up to 16 pages around a
fault, so each window is about one page fault of a start-up) and fails when
they are spread over more than LIMIT: the sign that the ordering was lost
(the linker flags dropped, or a list that no longer matches the code).

    /usr/bin/python3 scripts/check-startup-layout.py BINARY [LIMIT]

The same 1,908 functions measured: 37 windows with the
ordering in a clean build (50 in an incremental one), 80 in gold's default
layout (before it), 83 linked by lld without the list."""
import os
import subprocess
import sys

if len(sys.argv) not in (2, 3):
    sys.exit('usage: check-startup-layout.py BINARY [LIMIT]')
binary = sys.argv[1]
limit = int(sys.argv[2]) if len(sys.argv) == 3 else 60
listed = [line.strip() for line in open(os.path.join(os.path.dirname(__file__), 'startup-symbols.txt')) if line.strip()]
addresses = {}
for line in subprocess.run(['nm', binary], capture_output=True, text=True, check=True).stdout.splitlines():
    fields = line.split()
    if len(fields) == 3 and fields[1] in 'tTwW':
        addresses[fields[2]] = int(fields[0], 16)
found = [addresses[name] for name in listed if name in addresses]
windows = len({address >> 16 for address in found})
print('start-up layout: %d of the %d listed functions are in the binary, in %d 64 KiB windows (at most %d)'
      % (len(found), len(listed), windows, limit))
if len(found) < len(listed) // 2:
    sys.exit('error: fewer than half the listed functions are in the binary: run scripts/update-startup-symbols.sh')
if windows > limit:
    sys.exit('error: the start-up functions are spread over %d windows: the ordering was lost' % windows)

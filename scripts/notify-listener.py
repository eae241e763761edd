#!/usr/bin/env python3
"""A systemd NOTIFY_SOCKET for tests: binds an AF_UNIX datagram socket at
argv[1] and appends every datagram it receives, one per line (newlines in a
datagram become ' | '), to argv[2], until it is killed."""
import os
import socket
import sys

path, log = sys.argv[1], sys.argv[2]
listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
listener.bind(path)
with open(log, "a", buffering=1) as out:
    out.write("listening\n")
    while True:
        datagram = listener.recv(65536)
        out.write(datagram.decode("utf-8", "replace").strip().replace("\n", " | ") + "\n")

#!/usr/bin/env bash
# Builds the binary to deploy: `mainloop` as one static executable (the
# Swift runtime, libevent and glibc linked in; libsystemd is opened with
# dlopen when the D-Bus sources start, so the machine that runs it needs
# the same glibc, as any Debian package of this release has). Prints its
# path. The linker's notes that dlopen and getaddrinfo need that glibc at
# run time are expected.
#
#   bash scripts/build-static.sh
#   strip .build-static/release/mainloop     # optional: a smaller file
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build -c release --product mainloop --static-swift-stdlib -Xswiftc -static-executable \
  --scratch-path .build-static >&2
echo "$PWD/.build-static/release/mainloop"

#!/usr/bin/env bash
# Builds the binary to deploy: `mainloop` as one static executable (the
# Swift runtime, libevent and glibc linked in; libsystemd is opened with
# dlopen when the D-Bus sources start, so the machine that runs it needs
# the same glibc, as any Debian package of this release has). Prints its
# path. The linker's notes that dlopen and getaddrinfo need that glibc at
# run time are expected.
#
# The functions a start-up runs are laid out side by side: each Swift
# function gets a section of its own (-function-sections; the static
# standard library is built that way already) and LLVM's linker, lld (it
# comes with the Swift toolchain), places the ones listed in
# scripts/startup-symbols.txt first (--symbol-ordering-file), so a start-up
# faults in 38 of the text's 64 KiB windows instead of 80: 0.85-1.01x the
# start-up (most runs about 0.9x) and 4.1-4.7 MiB resident instead of 6.4
# (docs/PERFORMANCE.md, start-up). A name the list has and the code no
# longer has is skipped (--no-warn-symbol-ordering);
# scripts/update-startup-symbols.sh regenerates the list.
#
# Concrete generic types are reached through their metadata accessors, not
# by mangled name (-disable-concrete-type-metadata-mangled-name-accessors):
# by name, the runtime demangles the name and looks each requirement's
# conformance up by scanning every conformance record of the binary (1,918
# of them); the accessor is handed the witness tables. A start-up to READY=1
# ran 1.29 million instructions instead of 2.03 million (callgrind), six
# full conformance scans fewer, for 55 KB more code.
#
#   bash scripts/build-static.sh
#   strip .build-static/release/mainloop     # optional: a smaller file
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build -c release --product mainloop --static-swift-stdlib -Xswiftc -static-executable \
  -Xswiftc -use-ld=lld -Xswiftc -Xfrontend -Xswiftc -function-sections \
  -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors \
  -Xlinker --symbol-ordering-file="$PWD/scripts/startup-symbols.txt" -Xlinker --no-warn-symbol-ordering \
  --scratch-path .build-static >&2
echo "$PWD/.build-static/release/mainloop"

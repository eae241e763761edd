#!/usr/bin/env bash
# Sets up a fresh machine and runs the main job: `mainloop demo`, a real
# service on the libevent loop that is suspended, sent events, and resumed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build --product mainloop
exec .build/debug/mainloop demo

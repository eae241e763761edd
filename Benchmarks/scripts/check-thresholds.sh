#!/usr/bin/env bash
# Runs the ordo-one suites and checks every benchmark against its absolute
# p90 threshold in Thresholds/ (mallocCountTotal only: deterministic, so a
# failure is a real regression, not noise). Wall clock is reported, not gated.
# Exit status is non-zero when any threshold is exceeded.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ../scripts/setup.sh
swift package --disable-sandbox benchmark thresholds check --path "$PWD/Thresholds" --no-progress "$@"

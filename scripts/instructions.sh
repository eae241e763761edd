#!/usr/bin/env bash
# Instructions per event of the hot paths, exactly (callgrind), for a
# checkout: builds Benchmarks' `compare` in release, strips its debug info
# (callgrind cannot read Swift 6.3's DWARF 5), runs each probe at two N and
# prints the difference per event. Compare two checkouts (e.g. a worktree of
# an older commit) to see what a change cost.
#   bash scripts/instructions.sh [REPO]          PROBES="held live" to choose

set -euo pipefail
# Hashing seeded per process made probes that hash (keyed-first prepares
# 100,000 subject names) differ by a quarter from run to run.
export SWIFT_DETERMINISTIC_HASHING=1
repo=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$repo"
swift build -c release --package-path Benchmarks --product compare >/dev/null 2>&1
bin=$(ls -d Benchmarks/.build/release/compare)
objcopy --strip-debug "$bin" /tmp/compare-stripped-$$
for probe in ${PROBES:-typed held live keyed timer}; do
  counts=()
  for n in 20000 40000; do
    valgrind --tool=callgrind --callgrind-out-file=/tmp/cg-$$.out /tmp/compare-stripped-$$ --probe-$probe $n >/dev/null 2>/tmp/cg-$$.err || { echo "$probe: failed"; cat /tmp/cg-$$.err | tail -3; continue 2; }
    counts+=($(grep -E "^summary:|^totals:" /tmp/cg-$$.out | head -1 | awk '{print $2}'))
  done
  echo "$probe: $(( (counts[1]-counts[0]) / 20000 )) instructions per event"
done
rm -f /tmp/compare-stripped-$$ /tmp/cg-$$.out /tmp/cg-$$.err

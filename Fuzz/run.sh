#!/usr/bin/env bash
# Builds the request-decoder fuzzer with libFuzzer and AddressSanitizer and
# runs it for SECONDS (default 60) over a copy of the committed corpus (new
# inputs it finds stay out of the repository unless copied in by hand).
# Prints libFuzzer's summary; a crash, leak or timeout makes it exit non-zero
# and leaves the input as Fuzz/crash-* / leak-* / timeout-*.
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:-60}
swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library --product RequestDecoderFuzzer
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp Corpus/* "$work/"
.build/release/RequestDecoderFuzzer "$work" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
  -max_len=4096 -print_final_stats=1 -artifact_prefix="$PWD/" 2>&1 | grep -E "^(#|Done|stat::|==|SUMMARY|INFO: Seed)" | tail -8

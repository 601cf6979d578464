#!/usr/bin/env bash
# Build the parser fuzzer with clang-14 (libFuzzer + ASan, frontend instrumented) in build-fuzz/ and run it.
# Seed corpus: every lit input under test/lang (copied into build-fuzz/corpus, which the run extends).
# Usage: test/fuzz/run.sh [SECONDS]   (default 600); crashes land in build-fuzz/crashes/.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SECS="${1:-600}"
B="$ROOT/build-fuzz"
if [[ ! -f "$B/build.ninja" ]]; then
  CC=clang-14 CXX=clang++-14 cmake -S "$ROOT" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINM_FUZZ=ON \
    -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address" -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link,address" >/dev/null
fi
ninja -C "$B" inm-parse-fuzzer >/dev/null
mkdir -p "$B/corpus" "$B/crashes"
find "$ROOT/test/lang" -name '*.cf' -exec cp -n {} "$B/corpus/" \; 2>/dev/null || true
cd "$B/crashes"
exec "$B/bin/inm-parse-fuzzer" -max_total_time="$SECS" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 "$B/corpus"

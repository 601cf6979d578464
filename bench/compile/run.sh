#!/usr/bin/env bash
# Compile and export benchmark on the generated projects of ../shared/bench (issue #6/#7 speed targets).
# Usage: bench/compile/run.sh [SIZES] [RUNS]   e.g. bench/compile/run.sh 1000,10000,100000 3
# Prints one line per run and a median table (wall, user, sys, peak RSS, parse and execution phases);
# compare against the reference figures in ../shared/bench/README.md.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
sizes=${1:-1000,10000,100000}
runs=${2:-3}
bin=${INMANTA_BIN:-$here/build/bin/inmanta}
work=${BENCH_WORK:-/tmp/inmanta-bench}
kit=${BENCH_KIT:-$here/../shared/bench}
mkdir -p "$work"
exec python3 "$kit/run_bench.py" --inmanta "$bin" --work "$work" --sizes "$sizes" --runs "$runs" \
  --max-seconds 120 --json "$work/results.jsonl"

#!/usr/bin/env bash
# Read benchmark (issue #30, "Reads at 100k"): version get, resource pages (filter, sort, keyset next page),
# resource details and the desired-state diff on a generated version of each size, medians of RUNS from the
# client. Usage: bench/reads/run.sh [SIZES] [RUNS] [extra args: --vs OTHER_INMANTA, --save DIR, --compare DIR];
# INMANTA_BIN, BENCH_WORK, BENCH_KIT as in bench/push.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
sizes=${1:-10000,100000}
runs=${2:-7}
shift $(( $# > 2 ? 2 : $# ))
exec python3 "$here/bench/reads/run_reads_bench.py" --sizes "$sizes" --runs "$runs" \
  --inmanta "${INMANTA_BIN:-$here/build/bin/inmanta}" --work "${BENCH_WORK:-/tmp/inmanta-reads-bench}" \
  --kit "${BENCH_KIT:-$here/../shared/bench}" "$@"

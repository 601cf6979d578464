#!/usr/bin/env bash
# Delta push benchmark (issue #30): `inmanta export -d` of a generated project after a one-line change, pushed
# whole and as a delta (docs/server.md "Delta versions"), timed from the end of compilation to the release
# answer. Usage: bench/delta/run.sh [SIZES] [RUNS]; INMANTA_BIN, BENCH_WORK, BENCH_KIT as in bench/push.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
exec python3 "$here/bench/delta/run_delta_bench.py" --sizes "${1:-10000,100000}" --runs "${2:-5}" \
  --inmanta "${INMANTA_BIN:-$here/build/bin/inmanta}" --work "${BENCH_WORK:-/tmp/inmanta-delta-bench}" \
  --kit "${BENCH_KIT:-$here/../shared/bench}"

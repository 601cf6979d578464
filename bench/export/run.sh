#!/usr/bin/env bash
# Export benchmark (issue #7): `inmanta export -j` on generated 1k/10k/100k-resource projects, medians of 3
# under /usr/bin/time -v. Usage: bench/export/run.sh [SIZES] [RUNS]; INMANTA_BIN, BENCH_WORK, BENCH_KIT override
# the binary (default build/bin/inmanta), the work directory and the shared bench kit directory.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
exec python3 "$here/bench/export/run_export_bench.py" --sizes "${1:-1000,10000,100000}" --runs "${2:-3}" \
  --inmanta "${INMANTA_BIN:-$here/build/bin/inmanta}" --work "${BENCH_WORK:-/tmp/inmanta-export-bench}" \
  --kit "${BENCH_KIT:-$here/../shared/bench}"

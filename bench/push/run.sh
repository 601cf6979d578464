#!/usr/bin/env bash
# Push benchmark (issue #10): `inmanta export -d` of generated 10k/100k-resource projects to a server, timed from
# the end of compilation to the release answer, with the server's peak RSS (VmHWM). Usage:
# bench/push/run.sh [SIZES] [RUNS]; INMANTA_BIN, BENCH_WORK, BENCH_KIT as in bench/export; PUSH_SERVER=real|sink
# (default: real when the binary has the `server` verb, else the stand-in sink.py, which times the client only).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
exec python3 "$here/bench/push/run_push_bench.py" --sizes "${1:-10000,100000}" --runs "${2:-3}" \
  --inmanta "${INMANTA_BIN:-$here/build/bin/inmanta}" --work "${BENCH_WORK:-/tmp/inmanta-push-bench}" \
  --kit "${BENCH_KIT:-$here/../shared/bench}" --server "${PUSH_SERVER:-auto}"

#!/bin/sh
# Declaration-pass benchmark: generates a 100k-entity model (bench/decl/gen_model.py) and reports the
# median of 5 runs of `inmanta compile --dump-ir >/dev/null` plus peak RSS (GNU time).
# Usage: bench/decl/run.sh [build-dir] [entity-count]
set -e
BUILD=${1:-$(dirname "$0")/../../build}
N=${2:-100000}
DIR=${TMPDIR:-/tmp}/decl-bench-$N
python3 "$(dirname "$0")/gen_model.py" "$DIR" "$N"
cd "$DIR"
for i in 1 2 3 4 5; do
  /usr/bin/time -f "%e %M" "$BUILD/bin/inmanta" compile --dump-ir >/dev/null 2>>times.txt.$$ || true
done
sort -n times.txt.$$ | awk '{t[NR]=$1; if ($2>m) m=$2} END {print "median wall " t[3] " s, peak RSS " m/1024 " MiB (" NR " runs)"}'
rm -f times.txt.$$

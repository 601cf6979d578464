#!/bin/bash
# Parser throughput benchmark: generates a >= 10 MB model with the shared generator (explicit form: one
# constructor per node, plus the infra module's .cf concatenated), then times inmanta-parse-bench on it
# 5 times and reports the median MB/s and the peak RSS (/usr/bin/time -v).
# Usage: bench/parse/run.sh [BUILD_DIR] [ENTITIES]   (defaults: build, 60000)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${1:-$repo/build}
n=${2:-60000}
work=${TMPDIR:-/tmp}/inm-parse-bench
rm -rf "$work"
python3 /work/shared/bench/genmodel.py --entities "$n" --out "$work/proj" --explicit > /dev/null
cat "$work/proj/main.cf" > "$work/big.cf"
find "$work/proj/libs" -name '*.cf' -print0 | sort -z | xargs -0 cat >> "$work/big.cf"
bytes=$(stat -c %s "$work/big.cf")
echo "input: $work/big.cf, $bytes bytes"
rates=()
for i in 1 2 3 4 5; do
  out=$(/usr/bin/time -v "$build/bin/inmanta-parse-bench" "$work/big.cf" 2>&1)
  rate=$(echo "$out" | sed -n 's/.*: \([0-9.]*\) MB\/s.*/\1/p')
  rss=$(echo "$out" | sed -n 's/.*Maximum resident set size (kbytes): \([0-9]*\).*/\1/p')
  echo "run $i: $rate MB/s, peak RSS $rss kB"
  rates+=("$rate")
done
median=$(printf '%s\n' "${rates[@]}" | sort -n | sed -n 3p)
echo "median: $median MB/s"

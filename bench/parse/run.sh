#!/usr/bin/env bash
# Parser throughput benchmark (issue #4; target >= 20 MB/s on >= 10 MB of .cf): generates a model with the
# shared generator (explicit form: one constructor per node, with the module .cf files it ships concatenated
# after main.cf into one big.cf), then runs inmanta-parse-bench on it 5 times under /usr/bin/time -v.
# Reports per run and as medians: the parser's own throughput (parseFile only, timed inside the tool), the
# whole-process wall time and the throughput it implies (file loading and teardown included), and the peak RSS.
# Usage: bench/parse/run.sh [BUILD_DIR] [ENTITIES]   (defaults: build, 480000 = 10.5 MB); BENCH_KIT overrides ../shared/bench.
# Invariant: fails (exit 1) when the input is under 10 MB or a run reports parse errors.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
n=${2:-480000}
kit=${BENCH_KIT:-$repo/../shared/bench}
bin="$build/bin/inmanta-parse-bench"
[[ -x "$bin" ]] || { echo "parse-bench: no $bin (ninja -C $build inmanta-parse-bench)" >&2; exit 2; }
work=${TMPDIR:-/tmp}/inm-parse-bench
rm -rf "$work"
python3 "$kit/genmodel.py" --entities "$n" --out "$work/proj" --explicit >/dev/null
cat "$work/proj/main.cf" >"$work/big.cf"
find "$work/proj/libs" -name '*.cf' -print0 | sort -z | xargs -0 cat >>"$work/big.cf"
bytes=$(stat -c %s "$work/big.cf")
echo "input: $work/big.cf, $bytes bytes ($n entities)"
if ((bytes < 10000000)); then
  echo "parse-bench: input under 10 MB; pass more entities" >&2
  exit 1
fi

median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
rates=() walls=() rsss=()
for i in 1 2 3 4 5; do
  out=$(/usr/bin/time -v "$bin" "$work/big.cf" 2>&1) || { echo "$out" | tail -n 20 >&2; echo "parse-bench: run $i failed" >&2; exit 1; }
  rate=$(echo "$out" | sed -n 's/.*: \([0-9.]*\) MB\/s.*/\1/p')
  # Elapsed (wall clock) is h:mm:ss or m:ss.cc.
  wall=$(echo "$out" | sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): \(.*\)$/\1/p' |
    awk -F: '{s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s}')
  rss=$(echo "$out" | sed -n 's/.*Maximum resident set size (kbytes): \([0-9]*\).*/\1/p')
  printf 'run %d: parse %s MB/s, whole process %.2f s (%.1f MB/s), peak RSS %d MiB\n' "$i" "$rate" "$wall" \
    "$(echo "$bytes $wall" | awk '{print $1 / 1e6 / $2}')" "$((rss / 1024))"
  rates+=("$rate") walls+=("$wall") rsss+=("$rss")
done
mrate=$(printf '%s\n' "${rates[@]}" | median)
mwall=$(printf '%s\n' "${walls[@]}" | median)
peak=$(printf '%s\n' "${rsss[@]}" | sort -n | tail -n 1)
printf 'median of 5: parse %s MB/s, whole process %.2f s (%.1f MB/s); peak RSS %d MiB; target 20 MB/s: %s\n' \
  "$mrate" "$mwall" "$(echo "$bytes $mwall" | awk '{print $1 / 1e6 / $2}')" "$((peak / 1024))" \
  "$(echo "$mrate" | awk '{print ($1 >= 20) ? "met" : "NOT met"}')"

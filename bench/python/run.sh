#!/usr/bin/env bash
# Cost of a Python plugin call against the same built-in plugin (issue #14): three generated projects run
# N calls (default 10,000) of `upper(string) -> string` in a `for` loop — none (baseline: the loop and the
# string interpolation only), std::upper (native C++), pybench::upper (a Python @plugin through pybridge/),
# plus `pystart`: the baseline loop in a project importing the Python module (interpreter start + import, no
# call). Prints the median wall time of RUNS runs (default 5) of each and the per-call costs: native over
# `none`, Python over `pystart` (the one-off interpreter start is reported separately).
# Usage: bench/python/run.sh [CALLS] [RUNS]     (INMANTA_BIN overrides build/bin/inmanta)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
calls=${1:-10000}
runs=${2:-5}
bin=${INMANTA_BIN:-$here/build/bin/inmanta}
work=$(mktemp -d "${TMPDIR:-/tmp}/pybench.XXXXXX")
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/libs/pybench/model" "$work/libs/pybench/plugins"
printf 'name: pybench\nversion: 1.0.0\n' > "$work/libs/pybench/module.yml"
: > "$work/libs/pybench/model/_init.cf"
cat > "$work/libs/pybench/plugins/__init__.py" <<'PY'
from inmanta.plugins import plugin


@plugin
def upper(string: "string") -> "string":
    return string.upper()
PY
for kind in none native python pystart; do
  mkdir -p "$work/$kind"
  printf 'name: pybench_%s\nmodulepath: %s/libs\n' "$kind" "$work" > "$work/$kind/project.yml"
  case $kind in
    none) call='x = "x{{i}}"' ;;
    native) call='std::upper("x{{i}}")' ;;
    python) call='pybench::upper("x{{i}}")' ;;
    pystart) call='x = "x{{i}}"' ;;
  esac
  { case $kind in python|pystart) echo "import pybench" ;; esac
    echo "for i in std::sequence($calls):"
    echo "    $call"
    echo "end"; } > "$work/$kind/main.cf"
done

python3 - "$bin" "$work" "$runs" "$calls" <<'PY'
import statistics, subprocess, sys, time
binary, work, runs, calls = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
med = {}
for kind in ("none", "native", "pystart", "python"):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([binary, "compile"], cwd=f"{work}/{kind}", check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    med[kind] = statistics.median(times)
    print(f"{kind:7s} median {med[kind]*1000:8.1f} ms  (runs: {', '.join(f'{t*1000:.0f}' for t in times)})")
native = med["native"] - med["none"]
python = med["python"] - med["pystart"]
print(f"interpreter start + import (pystart - none): {(med['pystart'] - med['none'])*1000:.1f} ms")
print(f"native  {calls} calls: {native*1000:.1f} ms = {native/calls*1e6:.2f} us/call")
print(f"python  {calls} calls: {python*1000:.1f} ms = {python/calls*1e6:.2f} us/call")
print(f"python/native per-call ratio: {python/max(native, 1e-9):.1f}x")
PY

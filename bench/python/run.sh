#!/usr/bin/env bash
# Cost of a Python plugin call against the same built-in plugin (issue #14): generated projects run N calls
# (default 10,000) of `upper(string) -> string` in a `for` loop — std::upper (native C++) and pybench::upper
# (a Python @plugin through pybridge/) — plus `none` (the same loop assigning the interpolated string, no call)
# and `pystart` (that loop in a project importing the Python module: interpreter start + import, no call).
# Times are the compiler's own phase timings (`-vvv`: "Compilation took", "Loading Python plugins took"), so
# process start-up noise on the shared machine does not drown the per-call cost. Prints medians of RUNS runs
# (default 7) and the per-call costs.
# Usage: bench/python/run.sh [CALLS] [RUNS]     (INMANTA_BIN overrides build/bin/inmanta)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
calls=${1:-10000}
runs=${2:-7}
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
import re, statistics, subprocess, sys
binary, work, runs, calls = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def phase(text, name):
    m = re.search(name + r" took ([0-9.]+) seconds", text)
    return float(m.group(1)) if m else 0.0
med, start = {}, []
for kind in ("none", "native", "pystart", "python"):
    times = []
    for _ in range(runs):
        p = subprocess.run([binary, "-vvv", "compile"], cwd=f"{work}/{kind}", check=True, capture_output=True, text=True)
        times.append(phase(p.stderr, "Compilation"))
        if kind in ("pystart", "python"):
            start.append(phase(p.stderr, "Loading Python plugins"))
    med[kind] = statistics.median(times)
    print(f"{kind:7s} evaluation median {med[kind]*1000:8.1f} ms  (runs: {', '.join(f'{t*1000:.0f}' for t in times)})")
native = med["native"] - med["none"]
python = med["python"] - med["pystart"]
print(f"interpreter start + import (median over pystart/python runs): {statistics.median(start)*1000:.1f} ms")
print(f"native  {calls} calls: {native*1000:.1f} ms over the loop = {native/calls*1e6:.2f} us/call")
print(f"python  {calls} calls: {python*1000:.1f} ms over the loop = {python/calls*1e6:.2f} us/call")
print(f"python - native: {(python - native)/calls*1e6:.2f} us/call")
PY

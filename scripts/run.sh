#!/usr/bin/env bash
# The main job: set up and build (scripts/setup.sh), then compile and export the example project
# (examples/quickstart by default, or the directory given as $1) and print a one-line summary.
# The artifact is written to build/<project>.json. Exit status: non-zero if the compile or export failed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROJECT="${1:-$ROOT/examples/quickstart}"
PROJECT="$(cd "$PROJECT" && pwd)"
bash "$ROOT/scripts/setup.sh"

INMANTA="$ROOT/build/bin/inmanta"
OUT="$ROOT/build/$(basename "$PROJECT").json"
cd "$PROJECT"
t0=$(date +%s.%N)
"$INMANTA" compile
"$INMANTA" export -j "$OUT"
t1=$(date +%s.%N)
python3 - "$OUT" "$PROJECT" "$t0" "$t1" <<'PY'
import json, sys
out, project, t0, t1 = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
with open(out) as f:
    art = json.load(f)
res = art.get("resources", []) if isinstance(art, dict) else []
if isinstance(res, dict):  # keyed by resource id
    ids = list(res.keys())
else:
    ids = [r.get("id", "") if isinstance(r, dict) else str(r) for r in res]
types = sorted({i.split("[")[0] for i in ids if i})
print(f"run: {project}: compiled and exported {len(ids)} resources ({', '.join(types) or 'none'}) "
      f"to {out} in {t1 - t0:.2f} s")
PY

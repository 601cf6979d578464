#!/usr/bin/env bash
# The main job: set up and build (scripts/setup.sh), then compile and export the example project
# (examples/quickstart by default, or the directory given as $1) and print a one-line summary; then, unless
# INM_SKIP_DEPLOY=1, deploy examples/deploy with `inmanta deploy` (embedded mode: a private PostgreSQL under
# examples/deploy/data/deploy, the server, its scheduler and executors; files under examples/deploy/managed).
# The artifact is written to build/<project>.json (BUILD_DIR overrides build/). Exit status: non-zero if the compile or export failed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROJECT="${1:-$ROOT/examples/quickstart}"
PROJECT="$(cd "$PROJECT" && pwd)"
BUILD_DIR="${BUILD_DIR:-build}"
export BUILD_DIR
bash "$ROOT/scripts/setup.sh"

INMANTA="$ROOT/$BUILD_DIR/bin/inmanta"
OUT="$ROOT/$BUILD_DIR/$(basename "$PROJECT").json"
cd "$PROJECT"
t0=$(date +%s.%N)
"$INMANTA" compile
# The export's own summary goes to stderr: keep it for failures only, our line below says the same.
if ! "$INMANTA" export -j "$OUT" 2>"$OUT.log"; then
  cat "$OUT.log" >&2
  exit 1
fi
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

if [[ "${INM_SKIP_DEPLOY:-0}" != 1 ]]; then
  cd "$ROOT/examples/deploy"
  "$INMANTA" deploy
fi

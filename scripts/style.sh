#!/usr/bin/env bash
# The "style" phase of the CI job (scripts/test.sh): clang-format and a curated clang-tidy over the C++ sources.
#  - format: `clang-format --dry-run --Werror` (.clang-format) over every tracked .cpp/.h. Enforced only once the
#    file .ci/format-enforced exists (created in the commit that reformats the whole tree); until then it prints
#    how many files are not format-clean and never fails.
#  - storage: no `#include <pqxx/...>` outside orchestrator/store/pg (enforced).
#  - tidy: clang-tidy with the checks of .clang-tidy (a short list the tree passes) over the .cpp files changed
#    since the commit named in .ci/tidy-base (and still present), using $BUILD_DIR/compile_commands.json. Any
#    finding of those checks fails the phase. clang-14 runs on a private copy of the compile database: GCC-only
#    flags dropped (-fcoroutines, -Wno-mismatched-new-delete) and BOOST_ASIO_HAS_CO_AWAIT defined (Boost 1.74's
#    asio enables co_await under clang only with <experimental/coroutine>, which libstdc++ 12 lacks, while
#    clang-14's -std=c++20 has the real <coroutine>). A file with clang-diagnostic-error lines (one clang still
#    cannot compile, e.g. antlr's misc/InterpreterDataReader.h) is listed as not analysed, which does not fail
#    the phase.
#    INM_TIDY_ALL=1 checks every .cpp of the compile database instead; INM_TIDY_FILES="a.cpp b.cpp" just those.
# Exit status: non-zero when an enforced check fails. INM_SKIP_STYLE=1 (in scripts/test.sh) skips the phase.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${BUILD_DIR:-build}"
fail=0

pick() { for t in "$@"; do command -v "$t" >/dev/null 2>&1 && { echo "$t"; return; }; done; }
FORMAT="$(pick clang-format-14 clang-format)"
TIDY="$(pick clang-tidy-14 clang-tidy)"

# -- format
mapfile -t sources < <(git ls-files '*.cpp' '*.h')
if [[ -z "$FORMAT" ]]; then
  echo "style: format: no clang-format (apt-get install clang-format-14)"; fail=1
elif [[ -f .ci/format-enforced ]]; then
  if out=$(printf '%s\0' "${sources[@]}" | xargs -0 "$FORMAT" --dry-run --Werror 2>&1); then
    echo "style: format: ${#sources[@]} files clean"
  else
    echo "$out" | grep -E '(error|warning):' | cut -d: -f1 | sort -u | sed 's/^/style: format: not clean: /' | head -n 40
    echo "style: format: FAILED (fix with: clang-format-14 -i FILE)"; fail=1
  fi
else
  unclean=$(printf '%s\0' "${sources[@]}" | xargs -0 "$FORMAT" --dry-run 2>&1 | grep -E '(error|warning):' |
    cut -d: -f1 | sort -u | wc -l)
  echo "style: format: not enforced yet (.ci/format-enforced absent): $unclean of ${#sources[@]} files not clean"
fi

# -- one storage layer (issue #26, docs/architecture.md): libpqxx is included only under orchestrator/store/pg.
outside=$(git grep -l -E '#include *<pqxx/' -- '*.cpp' '*.h' | grep -v '^orchestrator/store/pg/' || true)
if [[ -n "$outside" ]]; then
  echo "$outside" | sed 's/^/style: storage: libpqxx included outside orchestrator\/store\/pg: /'
  echo "style: storage: FAILED (put the SQL behind an interface in orchestrator/store)"; fail=1
else
  echo "style: storage: libpqxx only in orchestrator/store/pg"
fi

# -- tidy
if [[ -z "$TIDY" ]]; then
  echo "style: tidy: no clang-tidy (apt-get install clang-tidy-14)"; fail=1
elif [[ ! -f "$BUILD_DIR/compile_commands.json" ]]; then
  echo "style: tidy: no $BUILD_DIR/compile_commands.json (configure with scripts/setup.sh first)"; fail=1
else
  # The private compile database for clang (see the header): GCC-only flags out, asio's co_await switch on.
  tidy_db=$(mktemp -d)
  python3 - "$BUILD_DIR/compile_commands.json" "$tidy_db/compile_commands.json" <<'PY'
import json, sys
db = json.load(open(sys.argv[1]))
for e in db:
    c = e["command"].replace(" -fcoroutines", "").replace(" -Wno-mismatched-new-delete", "")
    compiler, _, rest = c.partition(" ")
    e["command"] = compiler + " -DBOOST_ASIO_HAS_CO_AWAIT=1 " + rest
json.dump(db, open(sys.argv[2], "w"))
PY
  if [[ -n "${INM_TIDY_FILES:-}" ]]; then
    read -r -a files <<<"$INM_TIDY_FILES"
    what="${#files[@]} files named by INM_TIDY_FILES"
  elif [[ "${INM_TIDY_ALL:-0}" == 1 ]]; then
    mapfile -t files < <(python3 -c 'import json,sys,os; print("\n".join(sorted({os.path.relpath(e["file"]) for e in json.load(open(sys.argv[1])) if "/build" not in os.path.relpath(e["file"]) and not os.path.relpath(e["file"]).startswith("..")})))' "$BUILD_DIR/compile_commands.json")
    what="all ${#files[@]} files"
  else
    base=$(cat .ci/tidy-base 2>/dev/null)
    if [[ -z "$base" ]] || ! git cat-file -e "$base^{commit}" 2>/dev/null; then
      echo "style: tidy: base commit '${base}' of .ci/tidy-base not in this clone (shallow?): nothing checked"
      files=()
    else
      mapfile -t files < <(git diff --name-only --diff-filter=d "$base" -- '*.cpp' | while read -r f; do
        grep -q "\"file\": *\"[^\"]*/$f\"" "$BUILD_DIR/compile_commands.json" && echo "$f"; done)
    fi
    what="${#files[@]} files changed since ${base:0:12}"
  fi
  if ((${#files[@]})); then
    # One clang-tidy per file, as many at once as there are cores; each writes its own log, read back in order.
    mkdir -p "$tidy_db/logs"
    printf '%s\0' "${files[@]}" | xargs -0 -P "$(nproc)" -I{} sh -c \
      'exec "$1" -p "$2" --quiet --warnings-as-errors="*" "$3" >"$2/logs/$(echo "$3" | tr / _).log" 2>&1' \
      tidy "$TIDY" "$tidy_db" {}
    out=$(for f in "${files[@]}"; do cat "$tidy_db/logs/$(echo "$f" | tr / _).log" 2>/dev/null; done)
    # --warnings-as-errors tags every finding `[check-name,-warnings-as-errors]`.
    findings=$(echo "$out" | grep -E '(error|warning): .*\[(bugprone|performance|readability|misc|modernize|cert|google|llvm)-[a-z0-9.-]+(,-warnings-as-errors)?\]$')
    unparsed=$(echo "$out" | grep -E '\[clang-diagnostic-error\]$' | cut -d: -f1 | grep -E '\.(cpp|h)$' | sort -u)
    [[ -n "$unparsed" ]] && echo "$unparsed" | sed 's/^/style: tidy: not analysed (clang cannot compile it): /' | head -n 20
    if [[ -n "$findings" ]]; then
      echo "$findings" | head -n 40
      echo "style: tidy: FAILED on $what"; fail=1
    else
      echo "style: tidy: $what: no findings"
    fi
  else
    echo "style: tidy: $what"
  fi
  rm -rf "$tidy_db"
fi
exit $fail

#!/usr/bin/env bash
# The test job (also .ci/run): set up and build, then run the GoogleTest units (ctest), the lit golden
# suites (test/lang), the conformance runner (report only, when ../shared/conformance exists) and, unless
# skipped, the lit suites again under ASan+UBSan (build-asan/). The output ends with lit's and ctest's
# summary lines; the exit status is non-zero if any unit or lit test failed (conformance never fails it).
# Environment: BUILD_DIR (default build); INM_SKIP_ASAN=1 skips the sanitizer build, which runs last within
# INM_CI_BUDGET (below); INM_SKIP_CONFORMANCE=1 skips conformance.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
LIT=(python3 /usr/lib/llvm-14/build/utils/lit/lit.py --no-progress-bar)
T0=$SECONDS
fail=0
BUILD_DIR="${BUILD_DIR:-build}"
export BUILD_DIR

# Each phase ends with a `time:` line (wall seconds), the figures README's CI table quotes.
tp=$SECONDS
phase_done() { echo "time: $1 $((SECONDS - tp)) s"; tp=$SECONDS; }

bash scripts/setup.sh || { echo "test: build failed"; exit 1; }
phase_done build

# Style: clang-format (enforced once .ci/format-enforced exists) and the curated clang-tidy on changed files.
if [[ "${INM_SKIP_STYLE:-0}" != 1 ]]; then
  echo "== style (scripts/style.sh) =="
  bash scripts/style.sh || fail=1
  phase_done style
fi

# Conformance first: it is a report, and its summary must not be the last lines.
CONF="$ROOT/../shared/conformance"
if [[ "${INM_SKIP_CONFORMANCE:-0}" != 1 && -f "$CONF/run.py" ]]; then
  echo "== conformance (report only) =="
  python3 "$CONF/run.py" --compiler "$BUILD_DIR/bin/inmanta" --cases "$CONF/cases" --jobs 2 2>&1 | tail -n 5 || true
  phase_done conformance
fi

echo "== unit tests (ctest) =="
ctest_out=$(ctest --test-dir "$BUILD_DIR" --output-on-failure -j2 2>&1)
ctest_rc=$?
echo "$ctest_out" | grep -v -E '^ *(Start|[0-9]+/[0-9]+ Test) ' | grep -v -E '^\s*$' | grep -v -E '^(Test project|Internal ctest)' || true
((ctest_rc == 0)) || fail=1
phase_done ctest

echo "== integration (test/integration, private PostgreSQL) =="
integ_out=$(python3 test/integration/run.py --build "$BUILD_DIR" 2>&1)
integ_rc=$?
echo "$integ_out" | grep -E '(\.\.\. (FAIL|ERROR)|^(FAIL|ERROR):|^integration:)' | head -n 60
((integ_rc == 0)) || { echo "$integ_out" | tail -n 80; fail=1; }
phase_done integration

# The web console end to end: real Chromium against the real server (test/console/run_e2e.py); screenshots go to
# $BUILD_DIR/console-e2e (docs/console/ holds the committed ones). INM_SKIP_CONSOLE=1 skips it.
if [[ "${INM_SKIP_CONSOLE:-0}" != 1 ]]; then
  echo "== console e2e (Chromium, test/console) =="
  console_out=$(python3 test/console/run_e2e.py --build "$BUILD_DIR" --shots "$BUILD_DIR/console-e2e" 2>&1)
  console_rc=$?
  echo "$console_out" | grep -E '^(console e2e|FAIL|SKIP|metrics:|[0-9]+ passed)' | head -n 40
  ((console_rc == 0)) || { echo "$console_out" | tail -n 60; fail=1; }
  phase_done console-e2e
fi

echo "== robustness (test/robust/run.py: generated big inputs, 8 MiB stack, time and memory bounds) =="
robust_out=$(python3 test/robust/run.py --build "$BUILD_DIR" 2>&1)
robust_rc=$?
echo "$robust_out" | grep -v '^PASS: '
# Seeded mutations of the lit and conformance models (test/robust/mutate.py): no crash, hang or unclear message.
python3 test/robust/mutate.py --build "$BUILD_DIR" --seed 25 --budget 50 || robust_rc=1
((robust_rc == 0)) || fail=1
phase_done robust

echo "== lit (test/lang) =="
lit_out=$("${LIT[@]}" -sv test/lang --param inmanta_build="$ROOT/$BUILD_DIR" 2>&1)
lit_rc=$?
echo "$lit_out" | grep -v -E '^(PASS|XFAIL|UNSUPPORTED): ' | sed -n '/^\(Testing Time\|Failed Tests\|Unexpectedly\|Total\)/q;p'
((lit_rc == 0)) || fail=1
# Users' model tests: the example module repository, through `inmanta lit-config` (docs/testing.md "For users").
ex_out=$("${LIT[@]}" -sv examples/lit-module/tests --param inmanta="$ROOT/$BUILD_DIR/bin/inmanta" \
  --param exec_root="$ROOT/$BUILD_DIR/lit-module" 2>&1)
ex_rc=$?
echo "$ex_out" | grep -E '^(FAIL|UNRESOLVED|XPASS|TIMEOUT):|^ *(Passed|Failed|Unresolved)' | sed 's/^/lit-module: /'
((ex_rc == 0)) || { echo "$ex_out" | tail -n 40; fail=1; }
phase_done lit

# Sanitizers + assertions (no NDEBUG in build-asan/): a second build of the driver, then the lit suites and the
# robustness inputs on it. It runs last, within what is left of CI's 40 minutes: INM_CI_BUDGET (seconds for the
# whole job, default 2280) minus the time spent so far. It is skipped when less than INM_ASAN_MIN (default 900 s:
# a cold sanitizer build of the driver takes 700-800 s on 2 cores) is left; otherwise the lit run is shuffled and
# capped (`lit --max-time`) at what remains after the build, so a slow machine checks a random part of the suite
# (the rest is reported as skipped, never as passed) and a warm cache checks all of it.
asan_summary=""
BUDGET=${INM_CI_BUDGET:-2280}
if [[ "${INM_SKIP_ASAN:-0}" != 1 ]] && ((BUDGET - (SECONDS - T0) < ${INM_ASAN_MIN:-900})); then
  echo "== ASan+UBSan: skipped, $((SECONDS - T0)) s of the ${BUDGET} s budget spent (INM_ASAN_MIN ${INM_ASAN_MIN:-900} s) =="
  INM_SKIP_ASAN=1
fi
if [[ "${INM_SKIP_ASAN:-0}" != 1 ]]; then
  echo "== ASan+UBSan build (build-asan/) =="
  # Only the driver: the lit run needs nothing else (unit tests + bench tool were 23 % of its compile time).
  if BUILD_DIR=build-asan CMAKE_EXTRA="-DINM_SANITIZE=ON" TARGETS=inmanta INM_SKIP_DEPS=1 bash scripts/setup.sh; then
    phase_done asan-build
    left=$((BUDGET - (SECONDS - T0) - 60))
    ((left < 120)) && left=120
    asan_out=$(ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
      "${LIT[@]}" -s --shuffle --max-time "$left" test/lang --param inmanta_build="$ROOT/build-asan" 2>&1)
    asan_rc=$?
    echo "$asan_out" | grep -E '^(FAIL|XPASS|UNRESOLVED|TIMEOUT):' | head -n 50
    asan_summary=$(echo "$asan_out" | grep -E '^(  )?(Passed|Failed|Skipped|Unsupported|Expectedly|Unresolved|Timed|Unexpectedly)' | sed 's/^/asan: /')
    echo "$asan_summary"
    ((asan_rc == 0)) || fail=1
    phase_done asan-lit
    robust_asan=$(python3 test/robust/run.py --build build-asan --asan 2>&1) || fail=1
    echo "$robust_asan" | grep -v '^PASS: '
    phase_done asan-robust
  else
    echo "asan: build failed"
    fail=1
  fi
fi

echo "== summary (total $((SECONDS - T0)) s) =="
# Last lines: lit's summary, then ctest's.
echo "$lit_out" | sed -n '/^\(Testing Time\|Failed Tests\|Unexpectedly Passed Tests\)/,$p'
echo "$integ_out" | grep -E '^integration:'
echo "$ctest_out" | grep -E 'tests passed|tests failed|Total Test time'
exit $fail

#!/usr/bin/env bash
# Builds the parser fuzzer (libFuzzer + ASan, clang-14, frontend instrumented) in its own build directory
# (build-fuzz/, configured afresh whenever it was not configured by this script for this checkout) and runs it.
# Seed corpus: every lit input under test/lang (copied by content hash into build-fuzz/corpus, which the run
# extends); crashes, timeouts and leaks land in build-fuzz/crashes/ and make the exit status non-zero.
# Usage: test/fuzz/run.sh [SECONDS] [extra libFuzzer flags...]   (default 600 s)
# Environment: FUZZ_BUILD_DIR (default <repo>/build-fuzz), FUZZ_FRESH=1 wipes the build dir first,
# FUZZ_TARGET=http fuzzes the server's request path instead (inm-http-fuzzer, seeds test/fuzz/http-seeds,
# corpus build-fuzz/corpus-http, -max_len=4096).
# Invariant: every failure (configure, build, fuzzing) is printed, never swallowed.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SECS="${1:-600}"
shift || true
B="${FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
STAMP="$B/.fuzz-config"
FLAGS="-fsanitize=fuzzer-no-link,address"
OPT="-O2 -g"  # RelWithDebInfo without -DNDEBUG: assertions stay on, a failed assert is a finding
WANT="root=$ROOT cxx=clang++-14 flags=$FLAGS opt=$OPT"

die() { echo "fuzz: $*" >&2; exit 2; }
command -v clang++-14 >/dev/null 2>&1 || die "clang++-14 not found (apt-get install clang-14 libclang-rt-14-dev)"
ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 ||
  die "libFuzzer runtime missing (apt-get install libclang-rt-14-dev)"

# A build dir configured by hand, by another compiler or for another checkout is not reused: a stale cache
# makes CMake's glob check re-run with the old settings and fail in ways that are easy to miss.
if [[ "${FUZZ_FRESH:-0}" == 1 || ! -f "$STAMP" || "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]]; then
  echo "fuzz: configuring a fresh $B"
  rm -rf "$B"
  mkdir -p "$B"
  if ! CC=clang-14 CXX=clang++-14 cmake -S "$ROOT" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINM_FUZZ=ON \
      -DCMAKE_CXX_FLAGS="$FLAGS" -DCMAKE_C_FLAGS="$FLAGS" \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$OPT" -DCMAKE_C_FLAGS_RELWITHDEBINFO="$OPT" \
      >"$B/configure.log" 2>&1; then
    tail -n 40 "$B/configure.log" >&2
    die "configure FAILED (full log: $B/configure.log)"
  fi
  echo "$WANT" >"$STAMP"
fi

TARGET=inm-parse-fuzzer CORPUS="$B/corpus" MAXLEN=8192
if [[ "${FUZZ_TARGET:-parse}" == http ]]; then TARGET=inm-http-fuzzer CORPUS="$B/corpus-http" MAXLEN=4096; fi
echo "fuzz: building $TARGET"
t0=$SECONDS
if ! ninja -C "$B" "$TARGET" >"$B/build.log" 2>&1; then
  grep -v -E '^\[[0-9]+/[0-9]+\] ' "$B/build.log" | tail -n 60 >&2
  die "build FAILED (full log: $B/build.log; FUZZ_FRESH=1 to start over)"
fi
echo "fuzz: built in $((SECONDS - t0)) s"

mkdir -p "$CORPUS" "$B/crashes"
seeds=0
SEEDS=(-name '*.cf') SEED_DIR="$ROOT/test/lang"
[[ "$TARGET" == inm-http-fuzzer ]] && SEEDS=(-type f) SEED_DIR="$ROOT/test/fuzz/http-seeds"
while IFS= read -r -d '' f; do
  h=$(sha1sum "$f" | cut -c1-40)
  [[ -f "$CORPUS/$h" ]] || { cp "$f" "$CORPUS/$h"; seeds=$((seeds + 1)); }
done < <(find "$SEED_DIR" "${SEEDS[@]}" -print0)
echo "fuzz: corpus $(find "$CORPUS" -type f | wc -l) files ($seeds new seeds from $SEED_DIR), ${SECS} s"

before=$(find "$B/crashes" -type f | wc -l)
log="$B/fuzz-$TARGET.log"
"$B/bin/$TARGET" -max_total_time="$SECS" -max_len="$MAXLEN" -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$B/crashes/" "$@" "$CORPUS" 2>&1 | tee "$log" |
  grep --line-buffered -v -E '^#[0-9]+\s+(NEW|REDUCE)'
rc=${PIPESTATUS[0]}
after=$(find "$B/crashes" -type f | wc -l)
echo "fuzz: exit $rc, corpus $(find "$CORPUS" -type f | wc -l) files, $((after - before)) new artifacts in $B/crashes (log: $log)"
((rc == 0 && after == before)) || exit 1

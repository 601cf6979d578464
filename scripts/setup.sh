#!/usr/bin/env bash
# Installs the build dependencies (Debian 12, apt-get, only what is missing) and builds the compiler into
# build/ with CMake + Ninja + ccache. Idempotent and quiet: a second run installs nothing and only lets
# ninja bring the build up to date. Run as root (or with sudo) when packages are missing.
# Environment: BUILD_DIR (default build), BUILD_TYPE (default RelWithDebInfo), CMAKE_EXTRA (extra -D flags),
# JOBS (default: nproc), TARGETS (ninja targets, default all), INM_SKIP_DEPS=1 to skip the package check.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-build}"
BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}"
JOBS="${JOBS:-$(nproc)}"

PACKAGES=(build-essential cmake ninja-build ccache g++ python3 antlr4 libantlr4-runtime-dev
  default-jre-headless llvm-14-dev llvm-14-tools libfmt-dev nlohmann-json3-dev libyaml-cpp-dev
  libgit2-dev libpqxx-dev libboost-dev libssl-dev libgtest-dev googletest clang-14 libclang-rt-14-dev
  postgresql-15 python3-dev libre2-dev zlib1g-dev chromium clang-format-14 clang-tidy-14 libtcmalloc-minimal4
  openssh-server openssh-client sudo
  python3-jinja2 python3-pydantic) # the public std module's Python (docs/pybridge.md "The project's own std")
# The web console (console/) builds with npm; Debian's nodejs/npm only where no npm is installed already.
command -v npm >/dev/null 2>&1 || PACKAGES+=(nodejs npm)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

if [[ "${INM_SKIP_DEPS:-0}" != 1 ]]; then
  missing=()
  for p in "${PACKAGES[@]}"; do
    # Any Java runtime will do for the antlr4 tool (a JDK may already provide it).
    if [[ "$p" == default-jre-headless ]] && command -v java >/dev/null 2>&1; then continue; fi
    installed "$p" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    SUDO=""
    if [[ "$(id -u)" != 0 ]]; then
      command -v sudo >/dev/null 2>&1 || { echo "setup: need root to install ${missing[*]}" >&2; exit 1; }
      SUDO="sudo"
    fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq >/dev/null
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

cd "$ROOT"
# ccache hits whatever folder the checkout is in (a CI clone, a worktree): paths are hashed relative to the root.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  # shellcheck disable=SC2086
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" ${CMAKE_EXTRA:-} >/dev/null
fi
log="$BUILD_DIR/build.log"
start=$SECONDS
# shellcheck disable=SC2086
if ! ninja -C "$BUILD_DIR" -j "$JOBS" ${TARGETS:-} >"$log" 2>&1; then
  grep -v -E '^\[[0-9]+/[0-9]+\] ' "$log" | tail -n 80
  echo "setup: build FAILED in $BUILD_DIR (full log: $log)" >&2
  exit 1
fi
echo "setup: $BUILD_DIR up to date ($((SECONDS - start)) s)"

# The web console: `npm ci && npm run build` into console/dist when dist is missing or anything in console/ (outside
# node_modules and dist) is newer than it. INM_SKIP_CONSOLE=1 skips it.
if [[ "${INM_SKIP_CONSOLE:-0}" != 1 && -f console/package.json ]]; then
  if [[ ! -f console/dist/index.html ]] || [[ -n "$(find console -path console/node_modules -prune -o -path console/dist -prune \
      -o -path console/e2e -prune -o -type f -newer console/dist/index.html -print -quit)" ]]; then
    cstart=$SECONDS
    if ! (cd console && npm ci --no-audit --no-fund --loglevel=error && npm run build) >"$BUILD_DIR/console.log" 2>&1; then
      tail -n 40 "$BUILD_DIR/console.log"
      echo "setup: console build FAILED (full log: $BUILD_DIR/console.log)" >&2
      exit 1
    fi
    echo "setup: console/dist built ($((SECONDS - cstart)) s)"
  fi
fi

#!/usr/bin/env bash
# Counts the hand-written vocabulary sites of issue #26 in the orchestrator's C++ (orchestrator/, tools/,
# pybridge/; orchestrator/model/ and artifact/ excluded: they own the vocabulary): code lines that build or
# parse the `,v=<version>` suffix of resource version ids, and string literals used as deploy statuses,
# changes or scheduler request kinds. Comment-only lines are not counted. Run from the repository root;
# `-v` lists the sites (file:line). Invariant: reads only, prints counts.
set -euo pipefail
cd "$(dirname "$0")/.."
verbose=0
[[ ${1:-} == -v ]] && verbose=1
dirs=(orchestrator tools pybridge)
code() { grep -rnE --include=*.cpp --include=*.h "$1" "${dirs[@]}" | grep -v '^orchestrator/model/' |
  grep -vE '^[^:]+:[0-9]+:\s*(//|\*)' |
  grep -vE 'field\(([a-z]+|ag|p), "|get\("purged"\)|contains\("purged"\)|sortParam|\{"failed", failed|"deploying"\}\)|\{"push", false' || true; }
report() {
  local name=$1 pattern=$2 sites
  sites=$(code "$pattern")
  printf '%-34s %4d sites in %3d files\n' "$name" "$(grep -c . <<<"$sites" || true)" \
    "$(cut -d: -f1 <<<"$sites" | grep . | sort -u | wc -l)"
  if ((verbose)) && [[ -n $sites ]]; then sed 's/^/    /' <<<"$sites" | cut -c1-160; fi
}
report ',v= suffix (build/parse)' ',v='
status='"(deployed|failed|skipped|skipped_for_dependency|skipped_for_undefined|available|deploying|non_compliant|unavailable|undefined|orphaned|dry|cancelled)"'
report 'deploy status literals' "(==|!=|return|=|\\(|,|\\{) *$status"
report 'change literals' '"(nochange|created|updated|purged)" *[,;)}]|[=!]= *"(nochange|created|updated|purged)"'
report 'scheduler request kind literals' '"(read_version|agents_changed|get_fact|settings_changed|halt|resume)"|(kind *==|SchedulerRequest\(tx, [a-z]+,|requestScheduler\([^,]+\),) *"(deploy|dryrun)"'
report 'action kind literals' '"(store|push|pull|getfact|other)" *[,}]|field\("deploy"\)|"dryrun", "getfact"'

# Thin mains (issue #26): the lines of each verb's entry file in tools/ (goal: at most 150, wiring only —
# parse options, call a library, return the exit code; the logic lives in the libraries named in
# docs/architecture.md "Thin mains"). Files over the goal are marked.
thin_mains() {
  local f n total=0 over=0
  for f in tools/*Main.cpp; do
    n=$(wc -l <"$f")
    total=$((total + n))
    if ((n > 150)); then over=$((over + 1)); fi
    printf '%-34s %4d lines%s\n' "main ${f#tools/}" "$n" "$( ((n > 150)) && echo '  (over 150)' || true)"
  done
  printf '%-34s %4d lines, %d over 150\n' 'mains in total' "$total" "$over"
}
thin_mains
# The process-spawn calls left outside support/Spawn.cpp (issue #26; goal: SshIo's only, until it is converted;
# StartUp.cpp's re-exec of itself is not a spawn).
spawn_sites() {
  local sites
  sites=$(grep -rnE --include=*.cpp '(^|[^a-z_])(fork|vfork|posix_spawnp?|execvp?e?)\(' orchestrator tools pybridge |
    grep -vE '^tools/StartUp.cpp' | grep -vE '^[^:]+:[0-9]+:\s*(//|\*)' || true)
  printf '%-34s %4d sites in %3d files\n' 'spawn calls outside support/' "$(grep -c . <<<"$sites" || true)" \
    "$(cut -d: -f1 <<<"$sites" | grep . | sort -u | wc -l)"
  if ((verbose)) && [[ -n $sites ]]; then sed 's/^/    /' <<<"$sites" | cut -c1-160; fi
}
spawn_sites
# One storage layer (issue #26): the directories whose C++ mentions libpqxx (goal: 1, orchestrator/store/pg —
# SQL and libpqxx only there; comments count too, so a header does not even name it).
pqxx_dirs() {
  local dirs
  dirs=$(grep -rl pqxx --include=*.cpp --include=*.h orchestrator tools pybridge | xargs -r -n1 dirname | sort -u)
  printf 'pqxx_dirs: %d\n' "$(grep -c . <<<"$dirs" || true)"
  if ((verbose)) && [[ -n $dirs ]]; then sed 's/^/    /' <<<"$dirs"; fi
}
pqxx_dirs

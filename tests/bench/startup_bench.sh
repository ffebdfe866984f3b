#!/usr/bin/env bash
# Start-up of the commands a user runs most often, which use no GPU: the time and the peak
# resident memory of `tessera --version`, `validate` and `describe` on the default scenario,
# each the least over N runs (default 10). The goal: at most 50 ms and 40 MB. A bench command,
# not a test: it prints, and asserts nothing (docs/measurements/2026-11-27.md).
# Usage: tests/bench/startup_bench.sh [TESSERA] [RUNS]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
tessera=${1:-build/app/tessera}
runs=${2:-10}
[ -x "$tessera" ] || { echo "startup_bench.sh: $tessera is not built" >&2; exit 2; }
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "startup_bench.sh: RUNS takes a whole number" >&2; exit 2; }
timing=$(mktemp)
trap 'rm -f "$timing"' EXIT
measure() {
  local best_ms= best_kb= line ms kb
  for _ in $(seq "$runs"); do
    /usr/bin/time -o "$timing" -f '%e %M' "$tessera" "$@" >/dev/null 2>&1
    line=$(tail -n 1 "$timing")
    ms=$(awk '{ printf "%d", $1 * 1000 }' <<<"$line")
    kb=$(awk '{ print $2 }' <<<"$line")
    { [ -z "$best_ms" ] || [ "$ms" -lt "$best_ms" ]; } && best_ms=$ms
    { [ -z "$best_kb" ] || [ "$kb" -lt "$best_kb" ]; } && best_kb=$kb
  done
  printf '%-52s %5d ms %6.1f MB\n' "tessera $*" "$best_ms" "$(awk -v k="$best_kb" 'BEGIN { print k / 1000 }')"
}
measure --version
measure validate scenarios/default.yaml
measure describe scenarios/default.yaml --no-layers

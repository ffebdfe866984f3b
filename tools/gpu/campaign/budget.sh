# shellcheck shell=bash
# The call's budget (--budget-s, counted from the script's start) and the running step's
# --step-limit: every long command of a step runs under bounded.
# Runs COMMAND with what is left of the deadline (minus 30 s to pack the results) and of the
# running step's limit; 124 when none. bounded_bundle runs it in the bundle's environment.
step_end=
bounded() {
  local left=$((deadline - (SECONDS - started) - 30))
  [ -z "$step_end" ] || [ $((step_end - SECONDS)) -ge "$left" ] || left=$((step_end - SECONDS))
  [ "$left" -gt 0 ] || return 124
  timeout --kill-after=10 "$left" "$@"
}
bounded_bundle() { bounded env "${bundle_env[@]}" "$@"; }

# shellcheck shell=bash
step_note=  # one line a step leaves for the summary
summary_rows=()
# Runs one step, its output in logs/STEP.log (appended across calls), its outcome in steps.tsv,
# the summary and the progress record (progress.sh).
run_step() {
  local step=$1 status=0 begin=$SECONDS outcome log="$work/logs/$1.log"
  step_note=
  if [ $((deadline - (SECONDS - started) - 30)) -le 0 ]; then
    outcome="not started: out of time (--deadline $deadline)"
  else
    echo "== [$step] started $(date -u +%H:%M:%S)"
    echo "=== call of $(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$log"
    step_end=
    [ -z "${step_limit[$step]:-}" ] || step_end=$((SECONDS + step_limit[$step]))
    "step_$step" >>"$log" 2>&1 || status=$?
    step_end=
    # A runaway log (sanitizer reports, say) keeps its head and tail.
    if [ "$(stat -c %s "$log")" -gt $((4 * 1024 * 1024)) ]; then
      { head -c 1048576 "$log"; echo; echo "[... cut ...]"; tail -c 2097152 "$log"; } >"$log.cut"
      mv "$log.cut" "$log"
    fi
    # A step of several commands may end with its own status when the deadline stopped one.
    case "$status" in
      0) outcome=ok ;;
      124 | 137)
        if [ -n "${step_limit[$step]:-}" ] && [ $((SECONDS - begin)) -ge "${step_limit[$step]}" ]; then
          outcome="stopped at its limit (--step-limit $step=${step_limit[$step]})"
        else
          outcome="timed out at the deadline"
        fi ;;
      *) if [ $((deadline - (SECONDS - started) - 30)) -le 0 ]; then
           outcome="stopped at the deadline (exit $status)"
         else
           outcome="FAILED (exit $status)"
         fi ;;
    esac
  fi
  local seconds=$((SECONDS - begin))
  printf '%s\t%s\t%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$step" "$outcome" "$seconds" \
    "$step_note" >>"$work/steps.tsv"
  summary_rows+=("$(printf '%-11s %-34s %6s s  %s' "$step" "$outcome" "$seconds" "$step_note")")
  record_progress "$step" "$outcome"
  echo "== [$step] $outcome in $seconds s${step_note:+: $step_note}"
  [ "$outcome" = ok ]
}

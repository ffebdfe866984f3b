# shellcheck shell=bash
# Which steps earlier calls finished: the work folder's record on a warm machine, else the
# committed one. step<TAB>state<TAB>device<TAB>when<TAB>note; state done, partial or failed.
declare -A progress_row=()
read_progress() {
  progress_source=$progress
  [ ! -f "$work/progress.tsv" ] || progress_source="$work/progress.tsv"
  if [ "$dry_run" -eq 0 ] && [ -f "$progress_source" ]; then
    while IFS=$'\t' read -r step_name rest; do
      [[ -z $step_name || $step_name == \#* || $step_name == step ]] || progress_row[$step_name]="$rest"
    done <"$progress_source"
  fi
}
step_done() { [[ ${progress_row[$1]:-} == done$'\t'* ]]; }

# The steps of this call: those named, else the campaign's steps the progress file leaves (every
# step in a dry run); versions first always.
choose_steps() {
  if [ ${#steps[@]} -eq 0 ]; then
    if [ "$dry_run" -eq 1 ]; then
      steps=("${all_steps[@]}")
    else
      for step in "${campaign_steps[@]}"; do
        # The bundle at hand is new: its GPU tests run whatever an earlier call found (seconds).
        if ! step_done "$step" || [[ " ${always_steps[*]} " == *" $step "* ]]; then
          steps+=("$step")
        fi
      done
      echo "campaign.sh: steps left by $progress_source: ${steps[*]:-none}"
    fi
  fi
  local others=()
  for step in "${steps[@]}"; do [ "$step" = versions ] || others+=("$step"); done
  steps=(versions "${others[@]}")
}

# record_progress STEP OUTCOME, after run_step: done, partial (stopped by time: profiles and
# studies resume) or failed; a step never started keeps its earlier state.
record_progress() {
  local step=$1 outcome=$2 state
  case "$outcome" in
    ok) state=done ;;
    not\ started*) state= ;;
    FAILED*) state=failed ;;
    *) state=partial ;;
  esac
  [ -z "$state" ] || [ "$step" = versions ] ||
    progress_row[$step]="$(printf '%s\t%s\t%s\t%s' "$state" "$gpu_name" \
      "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "${step_note//$'\t'/ }")"
}

# The progress record, in the campaign's order, for the repository (--progress) and the next call.
write_progress() {
  {
    printf 'step\tstate\tdevice\twhen\tnote\n'
    for step in "${all_steps[@]}"; do
      [ -z "${progress_row[$step]:-}" ] || printf '%s\t%s\n' "$step" "${progress_row[$step]}"
    done
  } >"$work/progress.tsv"
  cp "$work/progress.tsv" "$out/progress.tsv"
}

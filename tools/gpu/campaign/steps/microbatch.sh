# shellcheck shell=bash
step_microbatch() {
  local target name problems arguments failures=0
  for target in $(items "$study_targets"); do
    arguments=()
    problems=
    if [[ $target == deepbench:* ]]; then problems=${target#deepbench:}; target=deepbench; fi
    name=$(target_name "$target")${problems:+_$problems}
    [ -z "$problems" ] || arguments+=(--problems "$problems")
    [ "$study_in_context" -eq 0 ] || { arguments+=(--in-context); name+=-in-context; }
    [ "$dry_run" -eq 0 ] || arguments+=(--mini-batch 2)
    [ "$target" = deepbench ] || target=$(target_path "$target")
    echo "== $target ${arguments[*]}"
    if bounded_bundle "$bundle/bin/tessera" microbatch-study "$target" "${arguments[@]}" --device "$device" \
         --limits "$study_limits" --policies "$study_policies" --all-max-batch "$study_all_max_batch" \
         --seconds-per-measurement "$seconds_per_measurement" \
         --output "$work/microbatch/$name"; then
      step_note+="$name ok; "
    else
      failures=$((failures + 1))
      step_note+="$name FAILED; "
    fi
  done
  return $((failures > 0))
}

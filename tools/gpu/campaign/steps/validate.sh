# shellcheck shell=bash
# The validate and onegpu steps, the same comparison of different scenarios.

# validate_each LIST: validate-sim on one GPU of each scenario in LIST, into validate/<name>/,
# with the scenarios' own measured steps (--measure-seconds 0): the step budgets were sized so.
validate_each() {
  local scenario name failures=0
  for scenario in $(items "$1"); do
    name=$(target_name "$scenario")
    echo "== $scenario"
    if (cd "$work" && bounded_bundle "$bundle/bin/tessera" validate-sim "$(target_path "$scenario")" --max-ranks 1 \
          --output "$work/validate/$name" --seconds-per-measurement "$seconds_per_measurement" \
          --measure-seconds 0 \
          "${cache_arguments[@]}"); then
      # validate-sim exits 0 whatever it compared: a run with no compared point is a failure.
      local compared mape
      compared=$(awk -F, '$4 == "yes"' "$work/validate/$name/comparison.csv" | wc -l)
      mape=$(awk -F, '$1 == "MAPE" { print $7 }' "$work/validate/$name/comparison.csv")
      if [ "$compared" -gt 0 ]; then
        step_note+="$name: $compared point(s) compared, MAPE ${mape}%; "
      else
        failures=$((failures + 1))
        step_note+="$name: no point compared (see $name's log); "
      fi
    else
      failures=$((failures + 1))
      step_note+="$name FAILED; "
    fi
  done
  return $((failures > 0))
}
step_validate() { validate_each "$validate_scenarios"; }
step_onegpu() { validate_each "$onegpu_scenarios"; }

# shellcheck shell=bash
step_crosscheck() {
  local target name folder failures=0
  for target in $(items "$check_targets"); do
    name=$(target_name "$target")
    folder="$work/crosscheck/$name"
    rm -rf "$folder"
    echo "== $target"
    if bounded_bundle "$bundle/bin/tessera" layer-check "$(target_path "$target")" --device "$device" --output "$folder" &&
       bounded "$python" "$repo/analysis/torch_crosscheck.py" "$folder" \
         --device "${device%%:*}"; then
      step_note+="$name ok; "
    else
      failures=$((failures + 1))
      step_note+="$name FAILED; "
    fi
    rm -f "$folder"/*/*.f32  # operands and results are large; case.json and the table stay
  done
  return $((failures > 0))
}

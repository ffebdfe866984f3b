# shellcheck shell=bash
# The committed profiles of this GPU (scenarios/profiles/<h100|h200>/), copied where tessera
# profile extends them (profiles/<device>/), so that a profile resumes where an earlier session
# stopped.
seed_profiles() {
  local kind slug file
  case "$gpu_name" in *H200*) kind=h200 ;; *H100*) kind=h100 ;; *) return 0 ;; esac
  slug=$(sed -E 's/[^A-Za-z0-9.-]+/_/g; s/^_+//; s/_+$//' <<<"$gpu_name")
  mkdir -p "$work/profiles/$slug"
  for file in "$repo/scenarios/profiles/$kind"/*.csv; do
    [ -f "$file" ] && [ ! -f "$work/profiles/$slug/$(basename "$file")" ] || continue
    cp "$file" "$work/profiles/$slug/"
    echo "resuming from $file"
  done
}

step_profile() {
  local target failures=0
  if [ "$dry_run" -eq 1 ]; then  # the GPU targets load and list their kernels
    for target in $(items "$profile_check_targets"); do
      tessera profile "$(target_path "$target")" --list | tail -n 1 || failures=$((failures + 1))
    done
  fi
  [ "$dry_run" -eq 1 ] || seed_profiles
  for target in $(items "$profile_targets"); do
    echo "== $target"
    # Run from the work folder: profiles/<device>/<scenario>.csv and this_machine.yaml land there.
    if (cd "$work" && bounded_bundle "$bundle/bin/tessera" profile "$(target_path "$target")" --device "$device" \
          --seconds-per-measurement "$seconds_per_measurement" "${cache_arguments[@]}"); then
      step_note+="$(target_name "$target") ok; "
    else
      failures=$((failures + 1))
      step_note+="$(target_name "$target") FAILED; "
    fi
  done
  return $((failures > 0))
}

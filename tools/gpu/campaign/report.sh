# shellcheck shell=bash
# What a call returns under --out: summary.txt (also kept in the work folder) and
# campaign.tar.gz, the work folder less what is large or rebuilt each call.
write_summary() {
  {
    echo "Tessera GPU campaign$([ "$dry_run" -eq 0 ] || echo ' (dry run, CPU)'), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    sed -n 1,2p "$bundle/manifest.txt"
    # versions.log is appended to by every call: this call's block only.
    awk '/^=== call of /{block=""} {block=block $0 "\n"} END{printf "%s", block}' \
      "$work/logs/versions.log" 2>/dev/null | grep -E '^(tessera|build|libraries|glibc|PyTorch|NVIDIA)|, *[0-9.]+ *, *[0-9]+ MiB' || true
    echo
    echo "This call's steps:"
    printf '%s\n' "${summary_rows[@]}"
    echo
    echo "Every call so far (steps.tsv): $(wc -l <"$work/steps.tsv") step runs"
    left=()
    for step in "${campaign_steps[@]}"; do
      step_done "$step" || left+=("$step")
    done
    echo "Campaign steps not done yet (progress.tsv): ${left[*]:-none}"
  } >"$out/summary.txt"
  cp "$out/summary.txt" "$work/summary.txt"
}

pack_results() {
  tar -C "$work" -czf "$out/campaign.tar.gz" --exclude=./bundle --exclude=./out --exclude='*.f32' .
  echo
  cat "$out/summary.txt"
  echo "results: $out/campaign.tar.gz ($(du -h "$out/campaign.tar.gz" | cut -f1)), $out/summary.txt, $out/progress.tsv"
}

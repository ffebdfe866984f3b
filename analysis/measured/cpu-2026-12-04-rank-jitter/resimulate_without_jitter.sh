#!/usr/bin/env bash
# Each 2-rank point of a validate-sim bench OUTPUT (run with --jitter-seconds) simulated again
# from the same rows on cluster-during-training.yaml without its rank_jitter: the step with and
# without the jitter against the measured one. Run from the repository root.
# Usage: resimulate_without_jitter.sh OUTPUT [TESSERA]
set -u
out=$1
tessera=${2:-build/app/tessera}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for d in "$out"/*/ranks-2; do
  name=$(basename "$(dirname "$d")")
  sed '/^rank_jitter:/,$d' "$d/cluster-during-training.yaml" >"$scratch/cluster.yaml"
  comparison="$(dirname "$d")/comparison.csv"
  for point in $(awk -F, 'NR > 1 && $2 == 2 && $4 == "yes" { print $1 }' "$comparison"); do
    rm -rf "$scratch/out"
    "$tessera" run "scenarios/$name.yaml" --points "$point" --cluster "$scratch/cluster.yaml" \
      --profiles "$d/profiles.csv" "$d/interleaved-profile.csv" --output "$scratch/out" \
      --fresh >/dev/null 2>&1
    without=$(awk -F, -v p="$point" 'NR > 1 && $2 == p { print $12 }' "$scratch/out/sim.csv")
    awk -F, -v p="$point" -v n="$without" -v s="$name" '$1 == p {
      printf "%-28s point %s measured %.4f s, with jitter %.4f s (%+.1f%%), without %.4f s (%+.1f%%)\n",
        s, p, $5, $6, 100 * ($6 / $5 - 1), n, 100 * (n / $5 - 1) }' "$comparison"
  done
done

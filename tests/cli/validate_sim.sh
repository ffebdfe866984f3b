#!/usr/bin/env bash
# `tessera validate-sim` on a tiny case: CosmoFlow-16 split 1 and 2 ways along depth, one measured
# step, kernels timed briefly. It must complete (exit 0), compare both points, list the 4-rank
# point as skipped with the reason (--max-ranks 2), write comparison.csv with the MAPE row, and
# describe the 2-rank machine with the measured send/receive link; and compare a pipelined point
# of two stages over two ranks. The MAPE itself is a finding,
# not a pass/fail: nothing here asserts a timing. Bad input exits 2.
# Usage: validate_sim.sh TESSERA MPIEXEC
set -u
tessera=$1
mpiexec=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

cat >"$scratch/tiny.yaml" <<'YAML'
name: validate-sim-tiny
model: {zoo: cosmoflow, options: {width: 16}, mini_batch: 2, optimizer: sgd}
parallelism: {data: 1, spatial: {grid: [1, 1, 1], until: pool2}}
io: {format: synthetic}
platform: {preset: lassen}
sweep: {scaling: strong, grow: spatial_d, gpus: [1, 2, 4]}
real: {warmup_steps: 1, measured_steps: 1}
YAML

# --warm-caches: no timing is asserted, and flushing the caches between runs only slows CI.
# --mpirun takes a command line: the launcher and its own options. --measure-seconds: a short
# measurement, but longer than the scenario's one step.
output=$("$tessera" validate-sim "$scratch/tiny.yaml" --output "$scratch/out" --max-ranks 2 \
  --mpirun "$mpiexec --bind-to none" --seconds-per-measurement 0.01 --warm-caches \
  --measure-seconds 0.3 --jitter-seconds 0.2 2>&1)
code=$?
[ "$code" -eq 0 ] || fail "exit $code: $output"
csv="$scratch/out/comparison.csv"
[ -f "$csv" ] || fail "no comparison.csv: $output"
for point in 0 1; do
  grep -Eq "^$point,$((point + 1)),$((point + 1))x1x1,yes,[0-9.e+-]+,[0-9.e+-]+,[0-9.e+-]+," "$csv" ||
    fail "point $point not compared: $(grep "^$point," "$csv")"
done
grep -q '^2,4,4x1x1,no,.*needs 4 ranks; at most 2 run here' "$csv" ||
  fail "point 2 not skipped with the reason: $(grep '^2,' "$csv")"
grep -Eq '^MAPE,,,,,,[0-9.e+-]+,' "$csv" || fail "no MAPE row: $(tail -1 "$csv")"
grep -q "MAPE .*% over 2 point(s)" <<<"$output" || fail "no MAPE printed: $output"
cluster="$scratch/out/ranks-2/cluster.yaml"
grep -q "gpu_interconnect: nvswitch" "$cluster" && grep -q "gpu_link_bandwidth:" "$cluster" ||
  fail "2-rank cluster lacks the measured rank link: $(cat "$cluster")"
grep -q "2 rank(s) sharing" "$cluster" || fail "2-rank cluster does not say how cores are shared"
# The ranks' jitter: from the profile's passes (at least 16) for the simulation before training,
# from the passes between the steps for the one compared; each a 2-rank moment per line; none at 1
# rank, whose median step it would not move.
moments_in() { grep -Ec '^    - \[[0-9.e+-]+, [0-9.e+-]+\]$' "$1"; }  # 2-rank moments of a cluster file
for file in cluster.yaml cluster-during-training.yaml; do
  moments=$(moments_in "$scratch/out/ranks-2/$file")
  grep -q '^rank_jitter:$' "$scratch/out/ranks-2/$file" && [ "$moments" -ge 1 ] ||
    fail "2 ranks: $file has no rank jitter: $(tail -5 "$scratch/out/ranks-2/$file")"
done
[ "$(grep -Ec '^    - \[' "$cluster")" -ge 16 ] || fail "fewer than 16 rank passes in $cluster"
"$tessera" validate --cluster "$cluster" | grep -q "rank jitter of 2 ranks at [0-9]* moments" ||
  fail "tessera validate does not say the rank jitter of $cluster"
grep -q "rank_jitter" "$scratch/out/ranks-1/cluster.yaml" && fail "1 rank: rank jitter written"
# The compared simulation plays the moments between the steps: with two or more it reports their
# median play; a busy machine may leave one moment between the steps, played as it is.
between_steps=$(moments_in "$scratch/out/ranks-2/cluster-during-training.yaml")
if [ "$between_steps" -ge 2 ]; then
  grep -q "rank jitter: the median step of [0-9]* plays" "$scratch/out/sim.csv" ||
    fail "the 2-rank simulation does not say it played the jitter's $between_steps moments"
elif [ "$between_steps" -eq 1 ]; then
  grep -q "rank jitter: the one measured moment" "$scratch/out/sim.csv" ||
    fail "the 2-rank simulation does not say it played the jitter's one moment"
fi
for side in real sim; do
  [ -s "$scratch/out/$side.csv" ] || fail "no $side.csv beside the comparison"
done
# The machine's own speed, sampled three times per rank count (a drift, not a finding).
speed="$scratch/out/machine_speed.csv"
for ranks in 1 2; do
  for moment in "before profiling" "before training" "after training"; do
    grep -Eq "^$ranks,$moment,[0-9.e+]+,[0-9.e+]+$" "$speed" ||
      fail "no speed sample '$moment' at $ranks rank(s): $(cat "$speed" 2>&1)"
  done
done
grep -q "this machine's speed while comparing" <<<"$output" || fail "no machine speed report"

# Per-layer times on both sides, and the real run executed the plan made from the profiles of
# the device it ran on (not the scenario's Lassen GPUs, which no profile row names).
layers="$scratch/out/layers.csv"
grep -Eq '^1,conv1,forward,[0-9.e+-]+,[0-9.e+-]+,' "$layers" ||
  fail "no per-layer comparison of conv1 at point 1: $(head -3 "$layers")"
grep -Eq '^0,optimizer,update,[0-9.e+-]+,[0-9.e+-]+,' "$layers" ||
  fail "no optimizer update in the per-layer comparison: $(grep optimizer "$layers")"
grep -q "largest differences per layer and pass" <<<"$output" || fail "no per-layer report"
real_json="$scratch/out/ranks-1/real/real.json"
grep -q '"provenance": *"profile"' "$real_json" ||
  fail "the real run did not plan its convolutions from the profiles: $real_json"

# The real runs measured for --measure-seconds: as many steps as the shortest step simulated
# from the profile measured before training takes to fill 0.3 s, at least the scenario's one
# (exactly, whatever the machine's speed: a busy machine's slower steps make fewer); the
# profile's rows were timed again between their steps, written beside it and simulated with;
# the comparison with the profile measured before training alone is written too.
for ranks in 1 2; do
  steps=$(grep -o '[0-9]* warm-up + [0-9]* measured steps' "$scratch/out/ranks-$ranks/real/real.csv")
  measured=$(awk '{print $4}' <<<"$steps")
  expected=$(awk -F, -v r="$ranks" '
    NR > 1 && $2 == r && $6 != "" && (shortest == "" || $6 + 0 < shortest) { shortest = $6 + 0 }
    END {
      if (shortest == "") { print 1; exit }
      n = 0.3 / shortest; c = int(n); if (c < n) c++
      print (c > 1 ? c : 1)
    }' "$scratch/out/comparison-profile-before.csv" 2>/dev/null)
  [ -n "$expected" ] && [ "$expected" -gt 1 ] ||
    echo "note: $ranks rank(s): the simulated step fills 0.3 s alone ($expected step)"
  [ "${measured:-0}" -eq "${expected:-0}" ] ||
    fail "$ranks rank(s): the real run measured '$steps', expected $expected measured steps for 0.3 s"
  grep -q "profile rows of rank 0's kernels, updates and gradient sums timed again" \
    "$scratch/out/ranks-$ranks/real/real.csv" || fail "$ranks rank(s): no interleaved timing in the note"
  interleaved="$scratch/out/ranks-$ranks/interleaved-profile.csv"
  [ "$(grep -v '^#' "$interleaved" 2>/dev/null | grep -c ',conv,')" -gt 0 ] ||
    fail "$ranks rank(s): no convolution rows timed between the steps in $interleaved"
  "$tessera" validate --profiles "$interleaved" >/dev/null 2>&1 ||
    fail "$ranks rank(s): the interleaved profile does not load: $interleaved"
  grep -q '^# caches: warm$' "$interleaved" || fail "$ranks rank(s): $interleaved does not say warm"
  # The 2-rank point all-reduces its gradients among both ranks: their sizes timed between the
  # steps too, as rows the simulation reads.
  allreduces=$(grep -v '^#' "$interleaved" | grep -c ",allreduce,forward,bytes [0-9]* ranks 2,")
  if [ "$ranks" -eq 2 ]; then
    [ "$allreduces" -gt 0 ] || fail "2 ranks: no all-reduce timed between the steps in $interleaved"
    grep -q "and the all-reduces of its [0-9]* gradient bucket size" \
      "$scratch/out/ranks-2/real/real.csv" || fail "2 ranks: the note does not say the all-reduces"
  else
    [ "$allreduces" -eq 0 ] || fail "1 rank: all-reduce rows in $interleaved"
  fi
done
grep -q "simulated with the profile measured before training alone" <<<"$output" ||
  fail "no comparison with the profile measured before training"
grep -Eq '^MAPE,,,,,,[0-9.e+-]+,' "$scratch/out/comparison-profile-before.csv" ||
  fail "no comparison-profile-before.csv with its MAPE"

# Each point's measured and simulated step as timelines, side by side.
for point in 0 1; do
  for side in real sim; do
    trace="$scratch/out/ranks-$((point + 1))/$side-trace-$point.json"
    grep -q '"traceEvents"' "$trace" 2>/dev/null && grep -q "\"backend\": *\"$side\"" "$trace" &&
      grep -q '"conv1 forward' "$trace" || fail "no $side timeline of point $point at $trace"
  done
done
# Each rank count's launch trained its own points only (run --points).
trained=$(tail -n +2 "$scratch/out/ranks-2/real/real.csv" | cut -d, -f2 | paste -sd' ')
[ "$trained" = "1" ] || fail "the 2-rank launch trained points '$trained', not point 1 alone"

# A pipelined point (two stages over two ranks) is compared too, and each stage's layers have
# their measured times (conv1 on the first rank, fc3 on the second).
cat >"$scratch/pipeline.yaml" <<'YAML'
name: validate-sim-pipeline
model: {zoo: cosmoflow, options: {width: 16}, mini_batch: 4, optimizer: sgd}
parallelism: {model: {degree: 2, micro_batches: 2, schedule: 1f1b}}
io: {format: synthetic}
platform: {preset: lassen}
sweep: {scaling: weak, grow: data, gpus: [2]}
real: {warmup_steps: 1, measured_steps: 1}
YAML
output=$("$tessera" validate-sim "$scratch/pipeline.yaml" --output "$scratch/pipe" --max-ranks 2 \
  --mpirun "$mpiexec --bind-to none" --seconds-per-measurement 0.01 --warm-caches \
  --measure-seconds 0.3 2>&1)
code=$?
[ "$code" -eq 0 ] || fail "pipeline: exit $code: $output"
grep -Eq '^0,2,1x1x1,yes,[0-9.e+-]+,[0-9.e+-]+,[0-9.e+-]+,' "$scratch/pipe/comparison.csv" ||
  fail "the pipelined point was not compared: $(cat "$scratch/pipe/comparison.csv")"
for layer in conv1 fc3; do
  grep -Eq "^0,$layer,forward,[0-9.]*[1-9][0-9.e+-]*,[0-9.e+-]+," "$scratch/pipe/layers.csv" ||
    fail "no measured time of $layer in the pipeline: $(grep "^0,$layer," "$scratch/pipe/layers.csv")"
done
# The real run executed the micro-batching plan of its micro-batches, made from the profiles.
! grep -q '"provenance": *"roofline"' "$scratch/pipe/ranks-2/real/real.json" ||
  fail "the pipelined real run planned its convolutions without the profiles"
# Without --jitter-seconds every rank computes at its usual speed.
grep -q "rank_jitter" "$scratch/pipe/ranks-2/cluster.yaml" "$scratch/pipe/ranks-2/cluster-during-training.yaml" &&
  fail "rank jitter without --jitter-seconds"
# Each rank profiled its own stage's kernels, and rank 0 wrote both ranks' rows: one per kernel
# the plan lists.
grep -q "each rank times its own stage's kernels" "$scratch/pipe/ranks-2/profile.log" ||
  fail "the 2-rank profile did not split the kernels by stage: $(head -3 "$scratch/pipe/ranks-2/profile.log")"
planned=$("$tessera" profile "$scratch/pipeline.yaml" --list | tail -1 | cut -d' ' -f1)
profiled=$(grep -v '^#' "$scratch/pipe/ranks-2/profiles.csv" | tail -n +2 |
  awk -F, '$2 !~ /^(copy_|allreduce|sendrecv|update_|gradient_sum|rank_pass)/ { print $2 "," $3 "," $4 }' | sort -u | wc -l)
[ "$profiled" -eq "$planned" ] ||
  fail "the 2-rank profile holds $profiled kernels of the plan's $planned"
# The stages are balanced on the measured device (cluster.yaml), not on the scenario's lassen:
# the profile ran again on it, and each of those stages' optimizer updates has its row.
stage_updates=$("$tessera" profile "$scratch/pipeline.yaml" --cluster "$scratch/pipe/ranks-2/cluster.yaml" \
  --list | awk '/^update_/ { print $3 }')
[ "$(echo "$stage_updates" | wc -w)" -eq 2 ] ||
  fail "profile --cluster --list does not list the two stages' updates: $stage_updates"
for parameters in $stage_updates; do
  grep -q ",update_[a-z_]*,forward,parameters $parameters," "$scratch/pipe/ranks-2/profiles.csv" ||
    fail "no optimizer update row at the stage size $parameters on cluster.yaml"
done
# And the later micro-batches' gradient sums, one per layer's parameter count, each with its row.
gradient_sums=$("$tessera" profile "$scratch/pipeline.yaml" --cluster "$scratch/pipe/ranks-2/cluster.yaml" \
  --list | awk '/^gradient_sum / { print $3 }')
[ -n "$gradient_sums" ] || fail "profile --list lists no gradient sum for the pipelined point"
for parameters in $gradient_sums; do
  grep -q ",gradient_sum,forward,parameters $parameters," "$scratch/pipe/ranks-2/profiles.csv" ||
    fail "no gradient sum row at $parameters parameters"
done

# Without interleaving and with the scenario's own steps: the profile measured before training,
# one measured step.
output=$("$tessera" validate-sim "$scratch/tiny.yaml" --output "$scratch/plain" --max-ranks 1 \
  --seconds-per-measurement 0.01 --warm-caches --no-interleave --measure-seconds 0 2>&1)
code=$?
[ "$code" -eq 0 ] || fail "--no-interleave: exit $code: $output"
[ ! -e "$scratch/plain/ranks-1/interleaved-profile.csv" ] || fail "--no-interleave timed rows again"
grep -q '1 warm-up + 1 measured steps' "$scratch/plain/ranks-1/real/real.csv" ||
  fail "--measure-seconds 0 did not keep the scenario's steps"

# tessera run's step counts and interleaved profile: the real backend's, checked as input.
output=$("$tessera" run "$scratch/tiny.yaml" --backend real --points 0 --warmup-steps 0 \
  --measured-steps 3 --output "$scratch/steps" 2>&1)
grep -q '0 warm-up + 3 measured steps' "$scratch/steps/real.csv" ||
  fail "--warmup-steps 0 --measured-steps 3 not applied: $output"
for bad in "--backend sim --measured-steps 3" "--backend real --measured-steps 0" \
           "--backend real --warmup-steps -1" "--backend real --interleaved-profile $scratch/x.csv"; do
  # shellcheck disable=SC2086
  stderr=$("$tessera" run "$scratch/tiny.yaml" $bad --points 0 --output "$scratch/bad-run" 2>&1)
  code=$?
  [ "$code" -eq 2 ] || fail "tessera run $bad: exit $code, not 2: $stderr"
done
stderr=$("$tessera" run "$scratch/tiny.yaml" --backend real --interleaved-profile "$scratch/x.csv" \
  --points 0 --output "$scratch/bad-run" 2>&1)
[[ "$stderr" == *"--interleaved-profile"*"expected --profiles too"* ]] ||
  fail "--interleaved-profile without --profiles does not say what it needs: $stderr"

"$tessera" validate-sim "$scratch/missing.yaml" >/dev/null 2>&1
[ $? -eq 2 ] || fail "a missing scenario does not exit 2"
stderr=$("$tessera" validate-sim "$scratch/tiny.yaml" --output "$scratch/bad" --mpirun "mpirun 'x" 2>&1)
code=$?
[ "$code" -eq 2 ] && [[ "$stderr" == *"--mpirun: expected a command line"* ]] ||
  fail "an unclosed quote in --mpirun: exit $code, $stderr"
[ ! -e "$scratch/bad" ] || fail "a bad --mpirun profiled before stopping"
: >"$scratch/a-file"
stderr=$("$tessera" validate-sim "$scratch/tiny.yaml" --output "$scratch/a-file/out" 2>&1)
code=$?
[ "$code" -eq 2 ] && [[ "$stderr" == *"--output"* ]] ||
  fail "an --output under a file: exit $code, not 2 naming --output: $stderr"

[ "$failures" -eq 0 ] && echo "validate-sim: all checks passed"
exit "$failures"

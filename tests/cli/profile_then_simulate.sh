#!/usr/bin/env bash
# `tessera profile` as a user meets it: it measures a scenario's kernels on this CPU into a
# profile database and a cluster file describing this machine; a second run measures nothing new;
# a simulation on that cluster with that database takes its conv times from the measurements
# (trace events say "profile"). Usage: profile_then_simulate.sh TESSERA SCENARIO
set -u
tessera=$1
scenario=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

# --warm-caches: no timing is asserted, and flushing the caches between runs only slows CI.
output=$("$tessera" profile "$scenario" --device cpu --output "$scratch/p/profile.csv" \
  --seconds-per-measurement 0.001 --no-copies --warm-caches 2>&1) || fail "profile: $output"
db="$scratch/p/profile.csv"
head -1 "$db" | grep -q '^# tessera-profile/1$' || fail "no profile header in $db"
for micro_batch in 1 2 4; do
  grep -q ",conv,forward,conv k3x3 s1x1 p1x1 d1x1 g1 bias in 3x32x32 out 16x32x32,float32,$micro_batch,.*,true$" "$db" ||
    fail "no measured conv1 forward row at micro-batch $micro_batch"
done
grep -q ",relu,backward_data,.*,default," "$db" || fail "no relu backward row"
[ -f "$scratch/p/this_machine.yaml" ] || fail "no this_machine.yaml"

output=$("$tessera" profile "$scenario" --device cpu --output "$db" --no-copies --warm-caches 2>&1)
echo "$output" | grep -q "profiled 0 new kernels" || fail "second run measured again: $output"

# What the runs found in the caches: warm, or on a CPU step-like (the flush, then a run on a
# second set of operands); one file, one way.
grep -q '^# caches: warm$' "$db" || fail "a --warm-caches profile does not say warm caches"
cold="$scratch/s/profile.csv"
output=$("$tessera" profile "$scenario" --device cpu --output "$cold" --layers conv1 \
  --seconds-per-measurement 0.001 --no-copies 2>&1) || fail "profile (step-like caches): $output"
grep -q '^# caches: step_like$' "$cold" || fail "a CPU profile does not say step_like caches"
grep -q ",conv,backward_filter,.*,true$" "$cold" || fail "step-like: no measured conv1 row"
output=$("$tessera" profile "$scenario" --device cpu --output "$db" --no-copies 2>&1)
[ $? -eq 2 ] && echo "$output" | grep -q "holds runs timed with warm caches" ||
  fail "extending a warm file with step-like runs not refused with exit 2: $output"

# A --layers name that is no layer of the model: exit 2 before measuring anything.
output=$("$tessera" profile "$scenario" --device cpu --output "$scratch/n/profile.csv" \
  --layers conv1,nosuch 2>&1)
[ $? -eq 2 ] && echo "$output" | grep -q -- "--layers: a layer of model .*, got 'nosuch'" ||
  fail "an unknown --layers name: $output"
[ -e "$scratch/n" ] && fail "an unknown --layers name left an output folder"

# --in-context: conv micro-batches below the batch timed as a plan runs them, the rest as before.
in_context="$scratch/c/profile.csv"
output=$("$tessera" profile "$scenario" --device cpu --output "$in_context" --in-context \
  --seconds-per-measurement 0.001 --no-copies --warm-caches 2>&1) || fail "profile --in-context: $output"
echo "$output" | grep -q "conv1 forward (batch 4; micro-batches 1 2 in context)" ||
  fail "conv1's micro-batches not timed in context: $output"
echo "$output" | grep -q "relu.*in context" && fail "a non-convolution timed in context: $output"
for micro_batch in 1 2 4; do
  grep -q ",conv,forward,conv k3x3 s1x1 p1x1 d1x1 g1 bias in 3x32x32 out 16x32x32,float32,$micro_batch,.*,true$" "$in_context" ||
    fail "--in-context: no measured conv1 forward row at micro-batch $micro_batch"
done
grep -q ",relu,backward_data,.*,default," "$in_context" || fail "--in-context: no relu backward row"
output=$("$tessera" profile "$scenario" --device cpu --output "$in_context" --in-context --no-copies \
  --warm-caches 2>&1)
echo "$output" | grep -q "profiled 0 new kernels" || fail "--in-context measured again: $output"
grep -q '^# micro_batch_timing: in_context$' "$in_context" || fail "--in-context file does not say so"
grep -q '^# micro_batch_timing: alone$' "$db" || fail "the default file does not say alone"
# One file, one way of timing.
output=$("$tessera" profile "$scenario" --device cpu --output "$db" --in-context --no-copies 2>&1)
[ $? -eq 2 ] && echo "$output" | grep -q "holds micro-batches timed alone" ||
  fail "extending an alone-timed file --in-context not refused with exit 2: $output"

output=$("$tessera" run "$scenario" --backend sim --profiles "$db" \
  --cluster "$scratch/p/this_machine.yaml" --output "$scratch/sim" \
  --trace "$scratch/trace.json" 2>&1) || fail "simulation: $output"
grep -q '"name": *"conv1 forward"' "$scratch/trace.json" || fail "no conv1 forward in the trace"
/usr/bin/python3 - "$scratch/trace.json" <<'PY' || fail "conv kernels not timed by the profile"
import json, sys
events = json.load(open(sys.argv[1]))
events = events["traceEvents"] if isinstance(events, dict) else events
convs = [e for e in events if e.get("name", "").startswith(("conv1 ", "conv2 ", "b1 ", "b2 "))]
assert convs and all(e["args"]["source"] == "profile" for e in convs), convs[:3]
PY

# A profile of another library version: its rows name algorithms this CPU does not offer. The
# real backend says which versions differ, runs the library's choice for those rows and says so
# once, with the count.
awk -F, -v OFS=, '/^# libraries:/ { print "# libraries: oneDNN 0.0.1"; next }
  /^#|^device,/ { print; next } $7 ~ /^(jit|x64|ref):/ {
  $7 = "jit:no_such_isa/blocked"; key = $1 FS $2 FS $3 FS $4 FS $5 FS $6 FS $7
  if (seen[key]++) next } { print }' "$db" >"$scratch/foreign.csv"
output=$("$tessera" run "$scenario" --backend real --profiles "$scratch/foreign.csv" \
  --output "$scratch/foreign" 2>&1) || fail "a real run with a foreign profile failed: $output"
[ "$(grep -c '^warning: point 0: [1-9][0-9]* convolution plan(s) .*does not offer' <<<"$output")" -eq 1 ] ||
  fail "no single warning naming the replaced plans: $output"
grep -q '^warning: point 0: profiles of .* measured with oneDNN 0.0.1, this device runs oneDNN' <<<"$output" ||
  fail "no warning naming the profile's other library version: $output"
grep -q 'convolution plan(s) over the ranks named an algorithm' "$scratch/foreign/real.json" ||
  fail "the result's note does not count the replaced plans"
output=$("$tessera" run "$scenario" --backend real --profiles "$db" --output "$scratch/own" 2>&1) ||
  fail "a real run with this CPU's profile failed: $output"
grep -q 'does not offer\|measured with' <<<"$output" && fail "this CPU's own profile warned: $output"

output=$("$tessera" profile "$scenario" --device nowhere 2>&1)
[ $? -eq 2 ] && echo "$output" | grep -q "cpu or cuda:N" || fail "bad --device not exit 2: $output"
[ "$failures" -eq 0 ] && echo "profile then simulate: ok"
exit "$failures"

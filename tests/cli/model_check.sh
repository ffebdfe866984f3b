#!/usr/bin/env bash
# `tessera model-check` and analysis/torch_model_step.py on this CPU: one training step of a
# one-block GPT-2 (causal attention, its head tied to the token embedding) and of a one-block
# BERT (token types, layer norms after the sums, its decoder tied with a bias of its own) and of
# ResNet-18 (convolutions, batch-norm on the batch's statistics, pooling, a fully connected layer)
# equals PyTorch's on the same weights and batch: the loss and every layer's gradient (the
# float64 reference taking Tessera's side of a ReLU's kink only within rounding of zero). A
# corrupted gradient must make the check fail; a model with dropout, a layer whose parameters
# are not mapped to PyTorch's (a transposed convolution) and bad options exit 2 naming them.
# Usage: model_check.sh TESSERA PYTHON
set -u
tessera=$1
python=$2
repository="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
check="$repository/analysis/torch_model_step.py"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
export OMP_NUM_THREADS=1

cp "$repository/scenarios/gpt2_block_check.yaml" "$scratch/gpt.yaml"  # the README's example
cat >"$scratch/bert.yaml" <<'YAML'
name: bert
model: {zoo: bert, options: {layers: 1, hidden: 16, heads: 2, sequence_length: 6, vocabulary: 13, dropout: false}, mini_batch: 2}
platform: {preset: lassen}
YAML
# 64 x 64 at 4 samples: the last batch-norms normalise 16 values a channel (at 32 x 32 and 2
# samples, 2 values: float32 and float64 differ by 2% there, in PyTorch as in Tessera).
cat >"$scratch/resnet.yaml" <<'YAML'
name: resnet
model: {zoo: resnet18, options: {image_size: 64, classes: 10}, mini_batch: 4}
platform: {preset: lassen}
YAML
cat >"$scratch/unet.yaml" <<'YAML'
name: unet
model: {zoo: unet3d, options: {width: 8}, mini_batch: 1}
platform: {preset: lassen}
YAML

for case in gpt bert resnet; do
  output=$("$tessera" model-check "$scratch/$case.yaml" --output "$scratch/$case" 2>&1)
  [ $? -eq 0 ] || fail "model-check $case: $output"
  report=$("$python" "$check" "$scratch/$case" 2>&1)
  [ $? -eq 0 ] || fail "torch_model_step.py $case: $report"
  grep -q " 0 failed" <<<"$report" || fail "$case: not every result compared: $report"
  echo "$report"
done
grep -q "mlm_decoder gradient" <(cat "$scratch/bert/model_step.csv") ||
  fail "BERT's decoder bias was not compared"

# Every ReLU's output is written, for the sides the reference takes at its kinks.
"$python" - "$scratch/resnet/case.json" <<'PY' || fail "ResNet-18's ReLU outputs"
import json, math, os, sys
case = json.load(open(sys.argv[1]))
relus = [layer["name"] for layer in case["model"]["layers"] if layer["op"] == "relu"]
assert [entry["layer"] for entry in case["kinks"]] == relus and len(relus) == 17, case["kinks"]
for entry in case["kinks"]:
    path = os.path.join(os.path.dirname(sys.argv[1]), entry["output"]["file"])
    assert os.path.getsize(path) == 4 * math.prod(entry["output"]["shape"]), entry
PY

# A gradient off by a little: the check fails and names it.
"$python" - "$scratch/gpt/block1_mlp_out.gradients.f32" <<'PY'
import sys, numpy
values = numpy.fromfile(sys.argv[1], dtype="<f4")
values[0] += 1e-2 * numpy.abs(values).max()
values.tofile(sys.argv[1])
PY
report=$("$python" "$check" "$scratch/gpt" 2>&1)
code=$?
[ "$code" -eq 1 ] && grep -q "off: block1_mlp_out gradient" <<<"$report" ||
  fail "a corrupted gradient passed (exit $code): $report"

# Bad input: exit 2, naming what.
sed 's/dropout: false/dropout: true/' "$scratch/gpt.yaml" >"$scratch/dropout.yaml"
output=$("$tessera" model-check "$scratch/dropout.yaml" --output "$scratch/dropout" 2>&1)
code=$?
[ "$code" -eq 2 ] && grep -q "dropout" <<<"$output" || fail "dropout: exit $code: $output"
output=$("$tessera" model-check "$scratch/gpt.yaml" --point 3 --output "$scratch/bad" 2>&1)
code=$?
[ "$code" -eq 2 ] && grep -q -- "--point" <<<"$output" || fail "--point 3: exit $code: $output"
"$tessera" model-check "$scratch/unet.yaml" --output "$scratch/unet" >/dev/null 2>&1 ||
  fail "model-check unet"
output=$("$python" "$check" "$scratch/unet" 2>&1)
code=$?
[ "$code" -eq 2 ] && grep -q "layer up3_upconv: the layout of op transposed_conv" <<<"$output" ||
  fail "a transposed convolution: exit $code: $output"
output=$("$python" "$check" "$scratch/gpt" --kink-tolerance -1 2>&1)
code=$?
[ "$code" -eq 2 ] && grep -q -- "--kink-tolerance" <<<"$output" ||
  fail "--kink-tolerance -1: exit $code: $output"
sed -i 's/"layer": "layer1_0_relu"/"layer": "no_such_relu"/' "$scratch/resnet/case.json"
output=$("$python" "$check" "$scratch/resnet" 2>&1)
code=$?
[ "$code" -eq 2 ] && grep -q "kinks of an unknown layer 'no_such_relu'" <<<"$output" ||
  fail "kinks of an unknown layer: exit $code: $output"
output=$("$python" "$check" "$scratch/nothing" 2>&1)
code=$?
[ "$code" -eq 2 ] || fail "a missing folder: exit $code: $output"

[ "$failures" -eq 0 ] && echo "model check: all checks passed"
exit $((failures > 0))

#!/usr/bin/env bash
# `tessera layer-check` and analysis/torch_crosscheck.py on this CPU: a small 2D model (stride,
# dilation, groups, a transposed convolution, max and average pooling with padding and ceil mode),
# CosmoFlow-16's 3D layers and a GPT block's layers (GELU, LayerNorm, causal self-attention). Tessera's oneDNN results must equal PyTorch's on the same
# operands; a corrupted result must make the cross-check fail; bad input exits 2.
# Usage: layer_check.sh TESSERA PYTHON
set -u
tessera=$1
python=$2
crosscheck="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/analysis/torch_crosscheck.py"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
export OMP_NUM_THREADS=1

cat >"$scratch/shapes.yaml" <<'YAML'
name: shapes
mini_batch: 2
layers:
  - {name: data, op: input, shape: [4, 13, 12]}
  - {name: strided, op: conv, out_channels: 6, kernel: 3, stride: 2, padding: 1}
  - {name: dilated, op: conv, out_channels: 6, kernel: 3, padding: 2, dilation: 2, groups: 2}
  - {name: up, op: transposed_conv, out_channels: 4, kernel: 2, stride: 2}
  - {name: maxpool, op: pool, mode: max, kernel: 3, stride: 2, padding: 1}
  - {name: avgpool, op: pool, mode: average, kernel: 2, stride: 2, ceil_mode: true}
  - {name: fc, op: fully_connected, out_features: 3}
  - {name: loss, op: softmax_cross_entropy}
YAML
cat >"$scratch/shapes_scenario.yaml" <<'YAML'
name: shapes
model: {file: shapes.yaml}
platform: {preset: lassen}
YAML
cat >"$scratch/cosmoflow16.yaml" <<'YAML'
name: cosmoflow16
model: {zoo: cosmoflow, options: {width: 16}, mini_batch: 1}
platform: {preset: lassen}
YAML
cat >"$scratch/gpt.yaml" <<'YAML'
name: gpt
model: {zoo: gpt2, options: {layers: 1, hidden: 16, heads: 4, sequence_length: 7, vocabulary: 11}, mini_batch: 3}
platform: {preset: lassen}
YAML

for case in shapes cosmoflow16 gpt; do
  scenario="$scratch/$case.yaml"
  [ "$case" = shapes ] && scenario="$scratch/shapes_scenario.yaml"
  output=$("$tessera" layer-check "$scenario" --device cpu --timed-runs 2 \
    --output "$scratch/$case" 2>&1)
  [ $? -eq 0 ] || fail "layer-check $case: $output"
  report=$("$python" "$crosscheck" "$scratch/$case" --device cpu --runs 2 2>&1)
  [ $? -eq 0 ] || fail "torch_crosscheck.py $case: $report"
  grep -q " 0 failed" <<<"$report" || fail "$case: not every result compared: $report"
  echo "$report"
done
for layer in strided dilated up maxpool avgpool; do
  [ -f "$scratch/shapes/$layer/case.json" ] || fail "layer-check wrote no case for $layer"
done
[ -d "$scratch/shapes/fc" ] && fail "layer-check wrote a case for a layer it does not check"
# One case per distinct kernel: the block's three LayerNorms have one shape.
for layer in block1_attention block1_attention_norm block1_mlp_gelu; do
  [ -f "$scratch/gpt/$layer/case.json" ] || fail "layer-check wrote no case for $layer"
done
# Attention: y, dx and 4 parameter gradients; LayerNorm: y, dx, dscale, dshift; GELU: y, dx.
[ "$(tail -n +2 "$scratch/gpt/crosscheck.csv" | wc -l)" -eq $((6 + 4 + 2)) ] ||
  fail "gpt: $(tail -n +2 "$scratch/gpt/crosscheck.csv" | wc -l) rows, expected 12"
# 3 convolution directions + 2 pooling directions per layer, one table row each.
[ "$(tail -n +2 "$scratch/shapes/crosscheck.csv" | wc -l)" -eq 13 ] ||
  fail "shapes: $(tail -n +2 "$scratch/shapes/crosscheck.csv" | wc -l) rows, expected 13"

# One wrong value in Tessera's forward result must be caught.
"$python" - "$scratch/shapes/strided/y.f32" <<'PYTHON'
import sys, numpy
values = numpy.fromfile(sys.argv[1], dtype="<f4")
values[len(values) // 2] += 1.0
values.tofile(sys.argv[1])
PYTHON
report=$("$python" "$crosscheck" "$scratch/shapes" --device cpu --runs 1 2>&1)
[ $? -eq 1 ] || fail "a corrupted result passed the cross-check: $report"
grep -q "off: strided forward" <<<"$report" || fail "the corrupted result is not named: $report"

"$tessera" layer-check "$scratch/shapes_scenario.yaml" --layers nope --output "$scratch/x" >/dev/null 2>&1
[ $? -eq 2 ] || fail "an unknown --layers name does not exit 2"
"$tessera" layer-check "$scratch/shapes_scenario.yaml" --point 3 --output "$scratch/x" >/dev/null 2>&1
[ $? -eq 2 ] || fail "a --point past the sweep does not exit 2"
output=$("$tessera" layer-check "$scratch/shapes_scenario.yaml" --mini-batch 2 --output "$scratch/x" 2>&1)
[ $? -eq 2 ] && grep -q -- "--mini-batch: applies to a zoo model name" <<<"$output" ||
  fail "--mini-batch with a scenario file is not refused: $output"
"$python" "$crosscheck" "$scratch/empty" >/dev/null 2>&1
[ $? -eq 2 ] || fail "a folder without cases does not exit 2"

[ "$failures" -eq 0 ] && echo "layer-check: all checks passed"
exit $((failures > 0))

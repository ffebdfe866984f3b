#!/usr/bin/env bash
# The PyTorch twin of a Tessera model (analysis/torch_model.py, built from `tessera describe
# --json`) has the same parameter count and every layer the same output shape, for each family
# of the equivalence tests and the zoo models at small sizes: the step benchmark against PyTorch
# compares like with like.
#   torch_model_check.sh TESSERA PYTHON REPOSITORY
set -u
tessera=$1 python=$2 repository=$(cd "$3" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0
models=()
describe() {  # describe NAME MODEL_YAML: the model's graph for the one PyTorch check below
  printf "name: %s\nmodel: %s\n" "$1" "$2" >"$scratch/$1.yaml"
  if "$tessera" describe "$scratch/$1.yaml" --json >"$scratch/$1.json"; then
    models+=("$scratch/$1.json")
  else
    echo "FAIL $1: tessera describe"
    failures=$((failures + 1))
  fi
}
for file in "$repository"/tests/data/models/families/*.yaml; do
  # The twin builds convolutional networks; recurrent layers are checked against plain
  # references of their definitions instead (tests/kernels/cpu_sequence_kernels_test.cpp).
  if grep -Eq "op: (lstm|embedding|attention|projection)\b" "$file"; then
    echo "$(basename "$file" .yaml): recurrent, not built by analysis/torch_model.py"
    continue
  fi
  describe "$(basename "$file" .yaml)" "{file: $file, mini_batch: 2}"
done
describe cosmoflow "{zoo: cosmoflow, options: {width: 32, batch_norm: true}, mini_batch: 2}"
describe unet3d "{zoo: unet3d, options: {width: 16}, mini_batch: 1}"
describe resnet18 "{zoo: resnet18, options: {image_size: 32, classes: 10}, mini_batch: 2}"
describe resnet50 "{zoo: resnet50, options: {image_size: 32, classes: 10}, mini_batch: 2}"
describe googlenet "{zoo: googlenet, options: {image_size: 64, classes: 10}, mini_batch: 2}"
describe inception_v3 "{zoo: inception_v3, options: {image_size: 299, classes: 10}, mini_batch: 1}"
describe alexnet "{zoo: alexnet, options: {classes: 10}, mini_batch: 1}"
describe vgg16 "{zoo: vgg16, options: {classes: 10}, mini_batch: 1}"
describe overfeat "{zoo: overfeat, options: {classes: 10}, mini_batch: 1}"
# Each model prints its own verdict; a mismatch in any exits 1.
"$python" "$repository/analysis/torch_step_benchmark.py" --check "${models[@]}" ||
  { echo "FAIL: a PyTorch twin differs (above)"; failures=$((failures + 1)); }
[ "${#models[@]}" -ge 17 ] || { echo "FAIL: only ${#models[@]} models described"; failures=$((failures + 1)); }
exit "$failures"

#!/usr/bin/env bash
# The GPU campaign on a lent GPU machine (docs/gpu.md), run from the archive tools/gpu/bundle.sh
# made here: unpacks it, points the loader at it and at the pip packages' NVIDIA libraries, prints
# the versions, then runs the steps, each logged and timed, a failure recorded without stopping
# the rest. Results stay in the work folder between calls on a warm machine (profiles and studies
# resume where they stopped); each call packs them into --out: campaign.tar.gz, summary.txt and
# progress.tsv.
#   tools/gpu/campaign.sh [options] [STEP...]
# Named steps run in the order named. With none named, the campaign's steps run in priority order
# (tests memcheck racecheck validate vdnn onegpu bench profile microbatch), less those the
# progress file (--progress) records as done: commit the returned progress.tsv there and the next
# GPU session resumes at the first unfinished step by the same command. tests and racecheck run
# every time: the bundle may hold GPU code no call has run. A dry run names none:
# every step, the progress file ignored.
# Steps:
#   versions    driver, CUDA runtime, cuDNN, NCCL, GPU; the machine's glibc against the bundle's
#   tests       every GPU test (the CUDA, cuDNN and NCCL suites of the kernel tests)
#   memcheck    compute-sanitizer memcheck over the same GPU tests (--memcheck-filter)
#   racecheck   compute-sanitizer racecheck on the layer kernels' tests (the reductions)
#   mpi         the MPI kernel tests on 2 ranks through the packed mpirun
#   crosscheck  tessera layer-check, then analysis/torch_crosscheck.py on the same operands
#   validate    tessera validate-sim on 1 GPU (--validate-scenarios)
#   vdnn        vDNN on the GPU: tessera run --backend real of VGG-16 (batch 256) with the device
#               capped at 12 GiB under offload all, conv and dyn, and uncapped (the oracle, and
#               all and conv without the cap); AlexNet, OverFeat, GoogLeNet (128) with offload
#               none and all; vdnn/summary.csv; then profiles of each model's uncapped run
#               (analysis/vdnn_gpu_compare.py simulates every run from them)
#   onegpu      tessera validate-sim on 1 GPU of U-Net-128, ResNet-18 (128), AlexNet (256)
#   profile     tessera profile --device cuda:0 for each profile target, resuming from the
#               committed profiles of this GPU (scenarios/profiles/<h100|h200>/)
#   microbatch  tessera microbatch-study on cuDNN for each study target
#   bench       the device-memory benchmark: one allocate-release pair on the CPU and cuda:0
# Options:
#   --bundle FILE        the archive (default: build/gpu-bundle/tessera-gpu.tar.xz)
#   --out DIR            where campaign.tar.gz and summary.txt go, e.g. the device tool's "$OUT"
#                        (default: the work folder's out/)
#   --work DIR           results kept between calls (default: build/gpu-campaign)
#   --resume FILE        a campaign.tar.gz of an earlier call: its results are restored first
#   --budget-s SECONDS   the call's budget, counted from the script's start: start no step
#                        later than 30 s before it, and end a running one then, so that packing
#                        still fits the call (default 540; a call runs 600 at most). --deadline
#                        is the same option
#   --step-limit STEP=S  end STEP after S seconds even where budget is left (repeatable; default
#                        memcheck=200, racecheck=60): one slow step leaves time to the next
#   --progress FILE      which steps earlier calls finished (default tools/gpu/progress.tsv)
#   --dry-run            on this machine's CPU with CI sizes: what a step can do without a GPU
#   --python PROGRAM     a Python with PyTorch (default: python3)
#   --cuda-lib-dir DIR   a folder of NVIDIA libraries besides the pip packages' (repeatable)
#   --test-filter F      gtest filter of the tests step (default: the CUDA, cuDNN, NCCL suites)
#   --memcheck-filter F  gtest filter of the memcheck step
#   --profile-targets L  comma-separated scenario files (relative to the repository) or zoo names
#   --seconds-per-measurement S   profile and microbatch steps (default 0.05)
#   --study-targets L    comma-separated: deepbench[:PROBLEMS], a scenario file or a zoo model
#   --study-limits L     workspace limits in MiB (default 8,64,512)
#   --study-in-context   time micro-batches as a plan runs them (microbatch-study --in-context),
#                        into microbatch/<target>-in-context/
#   --study-policies L   micro-batching policies (default undivided,power_of_two; 'all' profiles
#                        every micro-batch size and takes many times longer)
#   --validate-scenarios L, --check-targets L, --onegpu-scenarios L   comma-separated scenario
#                        files or zoo names
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tools/gpu/libraries.sh
source "$here/libraries.sh"
# shellcheck source=tools/gpu/environment.sh
source "$here/environment.sh"
started=$SECONDS

bundle_archive="$repo/build/gpu-bundle/tessera-gpu.tar.xz"
out=
work="$repo/build/gpu-campaign"
resume=
deadline=540
progress="$repo/tools/gpu/progress.tsv"
declare -A step_limit=([memcheck]=200 [racecheck]=60)
dry_run=0
python=python3
cuda_lib_dirs=()
steps=()
test_filter='*Cuda*:*Cudnn*:*Nccl*'
# What campaign 3 (2026-11-27, H200) left unchecked of the GPU tests: 25 partitioned-convolution
# grids (memcheck took 200 s for the first 205 tests; 305 of the 330 passed it with no memory
# error). Name --memcheck-filter "$test_filter" for every GPU test.
memcheck_filter='*CudaPartitionedConvolution.*grid1x1x8_k5_s2:*CudaPartitionedConvolution.*grid1x3x2*:*CudaPartitionedConvolution.*grid2x2x*:*CudaPartitionedConvolution.*grid3x1x2*'
racecheck_filter='CudaLayerKernels.*'
# The MLPerf HPC v0.7 CosmoFlow network's kernels, which the next round of the published
# validation scales to the v0.7 GPUs (docs/design/published-validation.md), first; then what
# campaigns 1 and 2 left of CosmoFlow-512's (done on the H200; scenarios/profiles/).
profile_targets=analysis/validation/mlperf_cosmoflow_profile.yaml,scenarios/cosmoflow512_profile_shards.yaml
seconds_per_measurement=0.05
# What campaign 3 left of the micro-batching study: the 'all' policy (DeepBench and AlexNet in
# context ran on 2026-11-27). --study-in-context times micro-batches as a plan runs them.
study_targets=scenarios/microbatching_alexnet.yaml
study_limits=8,64,512
study_policies=all
study_in_context=0
validate_scenarios=scenarios/cosmoflow128_real_gpu.yaml,scenarios/cosmoflow256_real_gpu.yaml
check_targets=scenarios/cosmoflow128_real_gpu.yaml,scenarios/cosmoflow256_real_gpu.yaml
onegpu_scenarios=scenarios/unet3d128_real_gpu.yaml,scenarios/resnet18_real_gpu.yaml,scenarios/alexnet_real_gpu.yaml
# vDNN runs: name, zoo model, batch, offload policy, device cap (GiB; 0 = the whole GPU).
vdnn_runs='vgg16-none-uncapped vgg16 256 none 0
vgg16-all-12GiB vgg16 256 all 12
vgg16-conv-12GiB vgg16 256 conv 12
vgg16-dyn-12GiB vgg16 256 dyn 12
vgg16-all-uncapped vgg16 256 all 0
vgg16-conv-uncapped vgg16 256 conv 0
alexnet-none alexnet 128 none 0
alexnet-all alexnet 128 all 0
overfeat-none overfeat 128 none 0
overfeat-all overfeat 128 all 0
googlenet-none googlenet 128 none 0
googlenet-all googlenet 128 all 0'
vdnn_model_options=
campaign_steps=(tests memcheck racecheck validate vdnn onegpu bench profile microbatch)
always_steps=(tests racecheck)
all_steps=(versions tests memcheck racecheck mpi crosscheck validate vdnn onegpu profile microbatch bench)
while [ $# -gt 0 ]; do
  case "$1" in
    --bundle) bundle_archive=$2; shift ;;
    --out) out=$2; shift ;;
    --work) work=$2; shift ;;
    --resume) resume=$2; shift ;;
    --deadline | --budget-s) deadline=$2; shift ;;
    --step-limit)
      [[ $2 =~ ^([a-z]+)=([0-9]+)$ ]] ||
        { echo "campaign.sh: --step-limit takes STEP=SECONDS, got '$2'" >&2; exit 2; }
      step_limit[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}; shift ;;
    --progress) progress=$2; shift ;;
    --dry-run) dry_run=1 ;;
    --python) python=$2; shift ;;
    --cuda-lib-dir) cuda_lib_dirs+=("$2"); shift ;;
    --test-filter) test_filter=$2; shift ;;
    --memcheck-filter) memcheck_filter=$2; shift ;;
    --profile-targets) profile_targets=$2; shift ;;
    --seconds-per-measurement) seconds_per_measurement=$2; shift ;;
    --study-targets) study_targets=$2; shift ;;
    --study-limits) study_limits=$2; shift ;;
    --study-policies) study_policies=$2; shift ;;
    --study-in-context) study_in_context=1 ;;
    --validate-scenarios) validate_scenarios=$2; shift ;;
    --check-targets) check_targets=$2; shift ;;
    --onegpu-scenarios) onegpu_scenarios=$2; shift ;;
    -*) echo "campaign.sh: unknown option '$1' (see the comment at the top)" >&2; exit 2 ;;
    *)
      [[ " ${all_steps[*]} " == *" $1 "* ]] ||
        { echo "campaign.sh: unknown step '$1' (steps: ${all_steps[*]})" >&2; exit 2; }
      steps+=("$1") ;;
  esac
  shift
done
[[ $deadline =~ ^[0-9]+$ ]] || { echo "campaign.sh: --budget-s takes seconds, got '$deadline'" >&2; exit 2; }
[ -f "$bundle_archive" ] || { echo "campaign.sh: no bundle at $bundle_archive (tools/gpu/bundle.sh makes it)" >&2; exit 2; }
bundle_archive=$(cd "$(dirname "$bundle_archive")" && pwd)/$(basename "$bundle_archive")
mkdir -p "$work"
work=$(cd "$work" && pwd)
[ -n "$out" ] || out="$work/out"
mkdir -p "$out" "$work/logs"
out=$(cd "$out" && pwd)

# Which steps earlier calls finished: the work folder's record on a warm machine, else the
# committed one. step<TAB>state<TAB>device<TAB>when<TAB>note; state done, partial or failed.
declare -A progress_row=()
progress_source=$progress
[ ! -f "$work/progress.tsv" ] || progress_source="$work/progress.tsv"
if [ "$dry_run" -eq 0 ] && [ -f "$progress_source" ]; then
  while IFS=$'\t' read -r step_name rest; do
    [[ -z $step_name || $step_name == \#* || $step_name == step ]] || progress_row[$step_name]="$rest"
  done <"$progress_source"
fi
step_done() { [[ ${progress_row[$1]:-} == done$'\t'* ]]; }
if [ ${#steps[@]} -eq 0 ]; then
  if [ "$dry_run" -eq 1 ]; then
    steps=("${all_steps[@]}")
  else
    for step in "${campaign_steps[@]}"; do
      # The bundle at hand is new: its GPU tests run whatever an earlier call found (seconds).
      if ! step_done "$step" || [[ " ${always_steps[*]} " == *" $step "* ]]; then
        steps+=("$step")
      fi
    done
    echo "campaign.sh: steps left by $progress_source: ${steps[*]:-none}"
  fi
fi
[[ " ${steps[*]} " == *" versions "* ]] || steps=(versions "${steps[@]}")

# CPU sizes for the dry run: every step's path through the script, nothing that needs a GPU.
device=cuda:0
cache_arguments=()
if [ "$dry_run" -eq 1 ]; then
  device=cpu
  seconds_per_measurement=0.001
  # No timing is judged, and flushing a CPU's last-level cache (twice its size) before every run
  # took minutes where that cache is 300 MiB.
  cache_arguments=(--warm-caches)
  profile_check_targets=$profile_targets  # listed (--list), not measured
  profile_targets=tests/data/scenarios/good/profile_small_cnn.yaml
  study_targets=deepbench:52
  study_limits=8
  validate_scenarios=tests/data/campaign/cosmoflow16_real.yaml
  check_targets=tests/data/campaign/cosmoflow16_real.yaml
  onegpu_scenarios=tests/data/campaign/cosmoflow16_real.yaml
  vdnn_runs='resnet18-none-uncapped resnet18 2 none 0
resnet18-all-1GiB resnet18 2 all 1
resnet18-dyn-1GiB resnet18 2 dyn 1'
  vdnn_model_options='{image_size: 32, classes: 10}'
fi

if [ -n "$resume" ]; then
  echo "campaign.sh: restoring the results of $resume"
  tar -C "$work" -xzf "$resume"
fi

# The bundle, fresh each call: the archive may have changed since the last.
bundle="$work/bundle/tessera-gpu"
rm -rf "$work/bundle"
mkdir -p "$work/bundle"
if command -v xz >/dev/null; then
  tar -C "$work/bundle" -xJf "$bundle_archive"
else  # the machine's image may lack xz; Python reads it
  "$python" -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
    "$bundle_archive" "$work/bundle"
fi

# The NVIDIA libraries' folders of the pip packages (nvidia-cudnn-cu13, nvidia-nccl-cu13,
# nvidia-cublas, ...), wherever this Python installed them.
pip_nvidia_dirs=$("$python" - <<'PYTHON' 2>/dev/null || true
import importlib.util, os
spec = importlib.util.find_spec("nvidia")
for root in (spec.submodule_search_locations if spec else []):
    for folder, _, files in sorted(os.walk(root)):
        if any(".so" in name for name in files) and os.path.basename(folder) == "lib":
            print(folder)
PYTHON
)
# Only Tessera's processes see the bundle: the machine's Python keeps its own libraries. The
# machine's own LD_LIBRARY_PATH (where its driver may live) comes last.
# shellcheck disable=SC2086  # one folder per word
bundle_environment "$bundle" $pip_nvidia_dirs "${cuda_lib_dirs[@]}" ${LD_LIBRARY_PATH:+${LD_LIBRARY_PATH//:/ }}
bundle_env+=("PATH=$bundle/bin:$PATH")
with_bundle() { env "${bundle_env[@]}" "$@"; }
tessera() { with_bundle "$bundle/bin/tessera" "$@"; }

# Runs COMMAND with what is left of the deadline (minus 30 s to pack the results) and of the
# running step's limit; 124 when none. bounded_bundle runs it in the bundle's environment.
step_end=
bounded() {
  local left=$((deadline - (SECONDS - started) - 30))
  [ -z "$step_end" ] || [ $((step_end - SECONDS)) -ge "$left" ] || left=$((step_end - SECONDS))
  [ "$left" -gt 0 ] || return 124
  timeout --kill-after=10 "$left" "$@"
}
bounded_bundle() { bounded env "${bundle_env[@]}" "$@"; }

# Splits a comma-separated list onto lines.
items() { tr ',' '\n' <<<"$1" | sed '/^$/d'; }
# A target's file name: a scenario's base name, or the zoo model's.
target_name() { local name; name=$(basename "$1" .yaml); echo "${name//:/_}"; }
# A scenario path relative to the repository becomes absolute; a zoo name stays.
target_path() { if [ -f "$repo/$1" ]; then echo "$repo/$1"; else echo "$1"; fi; }

step_note=  # one line a step leaves for the summary
gtest_count() {  # gtest_count LOG LABEL: the count of gtest's "[ LABEL ] N test(s)" summary line
  local count
  count=$(grep -o "\\[ *$2 *\\] [0-9][0-9]* tests\\?" "$1" | tail -n 1 | grep -o '[0-9][0-9]*')
  echo "${count:-0}"
}
gtest_counts() {  # PASSED/SKIPPED/FAILED counts of a gtest log (per-test SKIPPED lines have none)
  echo "passed $(gtest_count "$1" PASSED), skipped $(gtest_count "$1" SKIPPED)," \
       "failed $(gtest_count "$1" FAILED)"
}

step_versions() {
  echo "bundle: $(head -n 2 "$bundle/manifest.txt" | tr '\n' ' ')"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  else
    echo "nvidia-smi: not on this machine"
  fi
  tessera --version
  tessera devices  # with the CUDA libraries the module loaded
  local needed machine
  needed=$(awk '/^glibc needed:/ { print $3 }' "$bundle/manifest.txt")
  machine=$(getconf GNU_LIBC_VERSION | awk '{ print $2 }')
  echo "glibc: this machine $machine, the bundle needs $needed"
  "$python" -c 'import torch; print("PyTorch", torch.__version__, "CUDA", torch.version.cuda,
      "cuDNN", torch.backends.cudnn.version(), "GPU", torch.cuda.is_available())' ||
    echo "PyTorch: not importable by $python"
  echo "NVIDIA library folders: ${pip_nvidia_dirs:-none found through $python} ${cuda_lib_dirs[*]:-}"
  local sanitizer
  sanitizer=$(compute_sanitizer) && "$sanitizer" --version | tail -n 1 || echo "compute-sanitizer: not found"
  step_note="$(tessera devices | sed -n 's/^libraries: //p')"
  [ "$(printf '%s\n%s\n' "$needed" "$machine" | sort -V | tail -n 1)" = "$machine" ] ||
    { step_note="glibc $machine is older than the $needed the bundle needs"; return 1; }
}

step_tests() {
  local log="$work/tests/gpu_tests.log" status=0
  mkdir -p "$work/tests"
  bounded_bundle "$bundle/tests/tessera_kernels_tests" --gtest_filter="$test_filter" \
    --gtest_output="xml:$work/tests/gpu_tests.xml" >"$log" 2>&1 || status=$?
  cat "$log"
  step_note=$(gtest_counts "$log")
  [ "$status" -eq 0 ] || return "$status"
  # Host-only tests match the filter too (cuDNN's descriptor arithmetic): a GPU test that skips
  # where no GPU is seen tells whether one was, where the filter runs it.
  local probe='CudaDevice\.DescribesItself'
  if [ "$dry_run" -eq 0 ] && grep -q "\[ RUN      \] $probe" "$log" &&
     ! grep -q "\[       OK \] $probe" "$log"; then
    step_note="the GPU tests did not run ($step_note): is the GPU visible?"
    return 1
  fi
}

compute_sanitizer() {
  command -v compute-sanitizer 2>/dev/null && return 0
  local nvcc
  nvcc=$(command -v nvcc 2>/dev/null) && [ -x "$(dirname "$nvcc")/compute-sanitizer" ] &&
    echo "$(dirname "$nvcc")/compute-sanitizer"
}

# sanitize TOOL FILTER: compute-sanitizer's TOOL over the GPU tests FILTER selects, into
# tests/TOOL.log.
sanitize() {
  if [ "$dry_run" -eq 1 ]; then
    step_note="skipped: $1 needs a GPU"
    return 0
  fi
  local sanitizer log="$work/tests/$1.log" status=0
  sanitizer=$(compute_sanitizer) || { step_note="compute-sanitizer not found"; return 1; }
  mkdir -p "$work/tests"
  # API errors are left out: NCCL probes its kernels for other architectures at initialisation
  # and gets cudaErrorNoKernelImageForDevice, by design (32 such reports on 2026-11-27, all in
  # ncclInitKernelsForDevice); the program checks the status of every CUDA call itself.
  bounded_bundle "$sanitizer" --tool "$1" --report-api-errors no --error-exitcode 99 \
    "$bundle/tests/tessera_kernels_tests" --gtest_filter="$2" >"$log" 2>&1 || status=$?
  cat "$log"
  step_note="$(gtest_counts "$log"); $(grep -o 'ERROR SUMMARY: [0-9]* errors\?' "$log" | tail -n 1)"
  return "$status"
}
step_memcheck() { sanitize memcheck "$memcheck_filter"; }
step_racecheck() { sanitize racecheck "$racecheck_filter"; }

step_mpi() {
  local filter='*'
  [ "$dry_run" -eq 0 ] || filter='MpiCommunicator.*'  # ctest runs the rest here
  bounded_bundle "$bundle/bin/mpirun" -np 2 --oversubscribe -x OMP_NUM_THREADS=1 \
    "$bundle/tests/tessera_kernels_mpi_tests" --gtest_filter="$filter"
}

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

# validate_each LIST: validate-sim on one GPU of each scenario in LIST, into validate/<name>/.
validate_each() {
  local scenario name failures=0
  for scenario in $(items "$1"); do
    name=$(target_name "$scenario")
    echo "== $scenario"
    if (cd "$work" && bounded_bundle "$bundle/bin/tessera" validate-sim "$(target_path "$scenario")" --max-ranks 1 \
          --output "$work/validate/$name" --seconds-per-measurement "$seconds_per_measurement" \
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

# One vDNN run: a scenario written from the run's line (vdnn_runs), trained for real on one device
# capped where the line says so (a run an earlier call measured is kept); its row of
# vdnn/summary.csv from the result's CSV.
vdnn_run() {
  local name=$1 model=$2 batch=$3 offload=$4 cap_gib=$5 folder="$work/vdnn"
  local file="$folder/scenarios/$name.yaml"
  {
    echo "# Written by tools/gpu/campaign.sh (step vdnn): vDNN on the GPU at hand."
    echo "name: vdnn-gpu-$name"
    echo "model: {zoo: $model${vdnn_model_options:+, options: $vdnn_model_options}, mini_batch: $batch, optimizer: momentum}"
    if [ "$cap_gib" = 0 ]; then
      echo "memory: {offload: $offload}"
    else
      echo "memory: {offload: $offload, device_capacity: $cap_gib GiB}"
    fi
    echo "platform: {preset: dgx_h100_superpod, nodes: 1}"
    echo "sweep: {scaling: strong, grow: data, gpus: [1]}"
    echo "real: {warmup_steps: 1, measured_steps: 3}"
  } >"$file"
  echo "== $name"
  local csv="$folder/$name/real.csv"
  if [ -f "$csv" ]; then
    echo "measured by an earlier call: $csv"
  else
    rm -rf "$folder/$name"
    (cd "$work" && bounded_bundle "$bundle/bin/tessera" run "$file" --backend real \
       --output "$folder/$name") || { rm -f "$csv"; return 1; }
    [ -f "$csv" ] || { echo "no $csv"; return 1; }
  fi
  "$python" - "$csv" "$name" "$model" "$batch" "$offload" "$cap_gib" >>"$folder/summary.csv" <<'PYTHON'
import csv, sys
path, name, model, batch, offload, cap = sys.argv[1:]
row = next(csv.DictReader(open(path)))
print(",".join([name, model, batch, offload, cap, row["status"], row["step_s"],
                row["peak_memory_bytes"], row["average_memory_bytes"],
                row.get("offloaded_bytes", ""), row["note"].replace(",", ";")]))
PYTHON
}

step_vdnn() {
  local failures=0 line
  mkdir -p "$work/vdnn/scenarios"
  echo "run,model,batch,offload,cap_gib,status,step_s,peak_memory_bytes,average_memory_bytes,offloaded_bytes,note" \
    >"$work/vdnn/summary.csv"
  while read -r line; do
    if [ $((deadline - (SECONDS - started) - 30)) -le 0 ]; then
      failures=$((failures + 1))
      step_note+="${line%% *} not run: out of time; "
      continue
    fi
    # shellcheck disable=SC2086  # the line's five words
    if vdnn_run $line; then
      step_note+="${line%% *} ok; "
    else
      failures=$((failures + 1))
      step_note+="${line%% *} FAILED; "
    fi
  done <<<"$vdnn_runs"
  # The kernels of each model's uncapped run without offloading, for the simulation of every run
  # (analysis/vdnn_gpu_compare.py --profiles): profiles/<device>/vdnn-gpu-<run>.csv.
  local name model batch offload cap_gib
  while read -r name model batch offload cap_gib; do
    [ "$offload" = none ] && [ "$cap_gib" = 0 ] || continue
    (cd "$work" && bounded_bundle "$bundle/bin/tessera" profile "$work/vdnn/scenarios/$name.yaml" \
       --device "$device" --seconds-per-measurement "$seconds_per_measurement" \
       "${cache_arguments[@]}") || { failures=$((failures + 1)); step_note+="profile of $name FAILED; "; }
  done <<<"$vdnn_runs"
  return $((failures > 0))
}

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

step_microbatch() {
  local target name problems arguments failures=0
  for target in $(items "$study_targets"); do
    arguments=()
    problems=
    if [[ $target == deepbench:* ]]; then problems=${target#deepbench:}; target=deepbench; fi
    name=$(target_name "$target")${problems:+_$problems}
    [ -z "$problems" ] || arguments+=(--problems "$problems")
    [ "$study_in_context" -eq 0 ] || { arguments+=(--in-context); name+=-in-context; }
    [ "$dry_run" -eq 0 ] || arguments+=(--mini-batch 2)
    [ "$target" = deepbench ] || target=$(target_path "$target")
    echo "== $target ${arguments[*]}"
    if bounded_bundle "$bundle/bin/tessera" microbatch-study "$target" "${arguments[@]}" --device "$device" \
         --limits "$study_limits" --policies "$study_policies" --seconds-per-measurement "$seconds_per_measurement" \
         --output "$work/microbatch/$name"; then
      step_note+="$name ok; "
    else
      failures=$((failures + 1))
      step_note+="$name FAILED; "
    fi
  done
  return $((failures > 0))
}

# Runs one step, its output in logs/STEP.log (appended across calls), its outcome in steps.tsv.
summary_rows=()
step_bench() {
  local program="$bundle/bench/tessera_device_memory_bench"
  [ -x "$program" ] || { echo "no $program: the bundle was built without the benchmarks"; return 1; }
  mkdir -p "$work/bench"
  bounded_bundle "$program" \
    --benchmark_out="$work/bench/device_memory.json" --benchmark_out_format=json
}

run_step() {
  local step=$1 status=0 begin=$SECONDS outcome log="$work/logs/$1.log"
  step_note=
  if [ $((deadline - (SECONDS - started) - 30)) -le 0 ]; then
    outcome="not started: out of time (--deadline $deadline)"
  else
    echo "== [$step] started $(date -u +%H:%M:%S)"
    echo "=== call of $(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$log"
    step_end=
    [ -z "${step_limit[$step]:-}" ] || step_end=$((SECONDS + step_limit[$step]))
    "step_$step" >>"$log" 2>&1 || status=$?
    step_end=
    # A runaway log (sanitizer reports, say) keeps its head and tail.
    if [ "$(stat -c %s "$log")" -gt $((4 * 1024 * 1024)) ]; then
      { head -c 1048576 "$log"; echo; echo "[... cut ...]"; tail -c 2097152 "$log"; } >"$log.cut"
      mv "$log.cut" "$log"
    fi
    # A step of several commands may end with its own status when the deadline stopped one.
    case "$status" in
      0) outcome=ok ;;
      124 | 137)
        if [ -n "${step_limit[$step]:-}" ] && [ $((SECONDS - begin)) -ge "${step_limit[$step]}" ]; then
          outcome="stopped at its limit (--step-limit $step=${step_limit[$step]})"
        else
          outcome="timed out at the deadline"
        fi ;;
      *) if [ $((deadline - (SECONDS - started) - 30)) -le 0 ]; then
           outcome="stopped at the deadline (exit $status)"
         else
           outcome="FAILED (exit $status)"
         fi ;;
    esac
  fi
  local seconds=$((SECONDS - begin))
  printf '%s\t%s\t%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$step" "$outcome" "$seconds" \
    "$step_note" >>"$work/steps.tsv"
  summary_rows+=("$(printf '%-11s %-34s %6s s  %s' "$step" "$outcome" "$seconds" "$step_note")")
  # The progress record: done, partial (stopped by time: profiles and studies resume) or failed;
  # a step never started keeps its earlier state.
  local state
  case "$outcome" in
    ok) state=done ;;
    not\ started*) state= ;;
    FAILED*) state=failed ;;
    *) state=partial ;;
  esac
  [ -z "$state" ] || [ "$step" = versions ] ||
    progress_row[$step]="$(printf '%s\t%s\t%s\t%s' "$state" "$gpu_name" \
      "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "${step_note//$'\t'/ }")"
  echo "== [$step] $outcome in $seconds s${step_note:+: $step_note}"
  [ "$outcome" = ok ]
}

gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 || true)
gpu_name=${gpu_name:-$device}
failed=0
for step in "${steps[@]}"; do run_step "$step" || failed=$((failed + 1)); done

# The progress record, in the campaign's order, for the repository (--progress) and the next call.
{
  printf 'step\tstate\tdevice\twhen\tnote\n'
  for step in "${all_steps[@]}"; do
    [ -z "${progress_row[$step]:-}" ] || printf '%s\t%s\n' "$step" "${progress_row[$step]}"
  done
} >"$work/progress.tsv"
cp "$work/progress.tsv" "$out/progress.tsv"

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
tar -C "$work" -czf "$out/campaign.tar.gz" --exclude=./bundle --exclude=./out --exclude='*.f32' .
echo
cat "$out/summary.txt"
echo "results: $out/campaign.tar.gz ($(du -h "$out/campaign.tar.gz" | cut -f1)), $out/summary.txt, $out/progress.tsv"
echo "$((${#steps[@]} - failed)) passed, $failed failed"
exit $((failed > 0))

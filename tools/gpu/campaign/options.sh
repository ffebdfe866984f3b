# shellcheck shell=bash
# The campaign's settings (sourced by tools/gpu/campaign.sh, whose opening comment documents the
# options): the defaults, and parse_options, which sets them from the command line.
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
# What the GPU tests have not had checked yet: the code of 2026-12-05, max pooling of our own and
# cuDNN graph-API engines run as micro-batches (the campaign of 2026-12-04 checked every GPU test
# of its bundle once). Name --memcheck-filter "$test_filter" for every GPU test (about 250 s).
memcheck_filter='*CudaLayerKernels.PoolingForwardAndBackward:*CudnnMicroBatched.*'
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
# The 'all' policy profiles every micro-batch size up to this batch and excludes a larger kernel;
# tessera's own default (64) excluded every AlexNet kernel (batch 256) on 2026-12-04.
study_all_max_batch=256
study_in_context=0
validate_scenarios=scenarios/cosmoflow128_real_gpu.yaml,scenarios/cosmoflow256_real_gpu.yaml
check_targets=scenarios/cosmoflow128_real_gpu.yaml,scenarios/cosmoflow256_real_gpu.yaml
onegpu_scenarios=scenarios/unet3d128_real_gpu.yaml,scenarios/resnet18_real_gpu.yaml,scenarios/alexnet_real_gpu.yaml,analysis/validation/mlperf_cosmoflow_real_gpu.yaml
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

# parse_options ARGUMENT...: the options and steps named, checked; the bundle, work and out
# folders made absolute (the steps run from other folders).
parse_options() {
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
      --study-all-max-batch) study_all_max_batch=$2; shift ;;
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
}

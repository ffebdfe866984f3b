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
#   --study-policies L   micro-batching policies (default all, what campaigns left; 'all' profiles
#                        every micro-batch size and takes many times longer)
#   --study-all-max-batch N   the 'all' policy's largest kernel batch (default 256; larger ones
#                        are excluded)
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

# The pieces, one concern a file, found beside this script whatever the working folder.
# shellcheck source=tools/gpu/campaign/options.sh
source "$here/campaign/options.sh"
# shellcheck source=tools/gpu/campaign/progress.sh
source "$here/campaign/progress.sh"
# shellcheck source=tools/gpu/campaign/dry_run.sh
source "$here/campaign/dry_run.sh"
# shellcheck source=tools/gpu/campaign/unpack.sh
source "$here/campaign/unpack.sh"
# shellcheck source=tools/gpu/campaign/budget.sh
source "$here/campaign/budget.sh"
# shellcheck source=tools/gpu/campaign/targets.sh
source "$here/campaign/targets.sh"
# shellcheck source=tools/gpu/campaign/run_step.sh
source "$here/campaign/run_step.sh"
# shellcheck source=tools/gpu/campaign/report.sh
source "$here/campaign/report.sh"
# Step STEP is the function step_STEP, which run_step calls by name.
# shellcheck source=tools/gpu/campaign/steps/versions.sh
source "$here/campaign/steps/versions.sh"
# shellcheck source=tools/gpu/campaign/steps/tests.sh
source "$here/campaign/steps/tests.sh"
# shellcheck source=tools/gpu/campaign/steps/sanitize.sh
source "$here/campaign/steps/sanitize.sh"
# shellcheck source=tools/gpu/campaign/steps/mpi.sh
source "$here/campaign/steps/mpi.sh"
# shellcheck source=tools/gpu/campaign/steps/crosscheck.sh
source "$here/campaign/steps/crosscheck.sh"
# shellcheck source=tools/gpu/campaign/steps/validate.sh
source "$here/campaign/steps/validate.sh"
# shellcheck source=tools/gpu/campaign/steps/vdnn.sh
source "$here/campaign/steps/vdnn.sh"
# shellcheck source=tools/gpu/campaign/steps/profile.sh
source "$here/campaign/steps/profile.sh"
# shellcheck source=tools/gpu/campaign/steps/microbatch.sh
source "$here/campaign/steps/microbatch.sh"
# shellcheck source=tools/gpu/campaign/steps/bench.sh
source "$here/campaign/steps/bench.sh"

parse_options "$@"
read_progress
choose_steps
[ "$dry_run" -eq 0 ] || use_dry_run_sizes
restore_results
unpack_bundle

gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 || true)
gpu_name=${gpu_name:-$device}
failed=0
for step in "${steps[@]}"; do run_step "$step" || failed=$((failed + 1)); done

write_progress
write_summary
pack_results
echo "$((${#steps[@]} - failed)) passed, $failed failed"
exit $((failed > 0))

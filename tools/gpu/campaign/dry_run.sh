# shellcheck shell=bash
# The device the steps use, cuda:0 unless the dry run (--dry-run) switches to the CPU.
device=cuda:0
cache_arguments=()

# CPU sizes for the dry run: every step's path through the script, nothing that needs a GPU.
use_dry_run_sizes() {
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
}

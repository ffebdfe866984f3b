# shellcheck shell=bash
# The versions step: what the results were measured with, and whether the machine's glibc
# runs the bundle.
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

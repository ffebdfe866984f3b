# shellcheck shell=bash
# The work folder before the steps: an earlier call's results (--resume), the bundle unpacked and
# the environment its programs run in.

restore_results() {
  if [ -n "$resume" ]; then
    echo "campaign.sh: restoring the results of $resume"
    tar -C "$work" -xzf "$resume"
  fi
}

# The bundle, fresh each call: the archive may have changed since the last.
unpack_bundle() {
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
}
with_bundle() { env "${bundle_env[@]}" "$@"; }
tessera() { with_bundle "$bundle/bin/tessera" "$@"; }

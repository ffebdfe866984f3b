#!/usr/bin/env bash
# Packs Tessera for a lent GPU machine (docs/gpu.md): the CUDA Release build's tessera, the
# kernel test binaries (GPU and MPI) and the benchmarks, with every shared library they load that
# such a machine lacks, into one archive that tools/gpu/campaign.sh unpacks and runs there.
#   tools/gpu/bundle.sh [--build-dir DIR] [--output FILE] [--no-build] [--xz-level N]
#     --build-dir DIR   a CUDA build configured by setup.sh (default: build)
#     --output FILE     default: DIR/gpu-bundle/tessera-gpu.tar.xz
#     --no-build        pack what DIR holds (default: build the packed targets first, as setup.sh)
#     --xz-level N      xz's preset, 0 to 9 (default 6: 33 MiB where 1 gives 41 MiB in a sixth
#                       of the time; the archive travels with every device call, 64 MiB in all)
# What stays behind is listed in tools/gpu/libraries.sh: glibc, the NVIDIA driver, and cuDNN,
# NCCL and cuBLAS, which the machine's pip packages provide.
#
# Layout of the archive's folder tessera-gpu/:
#   bin/ tests/ bench/   the programs (bin/ also mpirun and orted)
#   root/                every packed library under its path on this machine (root/usr/lib/...),
#                        Open MPI's and PMIx's plugins, help texts and settings beside them, so
#                        that their relative layout holds and OPAL_PREFIX / PMIX_PREFIX relocate
#   library_dirs.txt     the root/ folders to put on LD_LIBRARY_PATH
#   manifest.txt         versions, the newest glibc symbol version needed, the packed files
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tools/gpu/libraries.sh
source "$here/libraries.sh"

build_dir=build
output=
build=1
xz_level=6
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir=$2; shift ;;
    --output) output=$2; shift ;;
    --no-build) build=0 ;;
    --xz-level) xz_level=${2:-}; shift $(($# > 1 ? 1 : 0)) ;;
    *) echo "bundle.sh: unknown option '$1' (see the comment at the top of bundle.sh)" >&2; exit 2 ;;
  esac
  shift
done
[[ "$xz_level" =~ ^[0-9]$ ]] || { echo "bundle.sh: --xz-level takes 0 to 9, not '$xz_level'" >&2; exit 2; }
cd "$repo"
build_dir=$(cd "$build_dir" && pwd)
[ -n "$output" ] || output="$build_dir/gpu-bundle/tessera-gpu.tar.xz"

programs=(app/tessera tests/tessera_kernels_tests tests/tessera_kernels_mpi_tests)
benchmarks=(tessera_partitioned_convolution_bench tessera_convolution_bench
            tessera_device_memory_bench tessera_cpu_layer_kernels_bench tessera_hdf5_read_bench tessera_collectives_bench
            tessera_step_bench)
if [ "$build" -eq 1 ]; then
  cmake --build "$build_dir" -j "$(nproc)" --target tessera tessera_kernels_tests \
    tessera_kernels_mpi_tests "${benchmarks[@]}"
fi
for program in "${programs[@]}"; do
  [ -x "$build_dir/$program" ] || { echo "bundle.sh: $build_dir/$program is not built" >&2; exit 1; }
done
cuda_module="$build_dir/lib/libtessera_cuda.so"  # the CUDA parts, loaded on first use
if [ ! -f "$cuda_module" ] || ! grep -q 'NEEDED *libcudnn' <<<"$(objdump -p "$cuda_module")"; then
  echo "bundle.sh: $build_dir was built without the CUDA parts (nvcc, cuDNN and NCCL are needed;" \
       "see setup.sh)" >&2
  exit 1
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
top="$stage/tessera-gpu"
mkdir -p "$top/bin" "$top/tests" "$top/bench" "$top/root"

# Copies a file to root/ under its real path on this machine, named `name` (default: its own).
# Each plugin's closure names the same thirty-odd libraries again: a request seen before returns
# before forking readlink (3,600 requests for Open MPI's plugins took 22 s).
declare -A packed=() requested=()
pack_file() {
  local source name target
  [ -n "${requested["$1:${2:-}"]:-}" ] && return 0
  requested["$1:${2:-}"]=1
  source=$(readlink -f "$1")
  name=${2:-${source##*/}}
  target="$top/root${source%/*}/$name"
  [ -n "${packed[$target]:-}" ] && return 0
  packed[$target]=1
  mkdir -p "${target%/*}"
  cp "$source" "$target"
}

# The libraries `elf` loads, recursively, as the loader resolves them here: "soname path" lines.
needed_libraries() {
  ldd "$1" | awk '/=>/ { if ($3 ~ /^\//) print $1, $3; else print $1, "not-found" }'
}

# Packs the closure of `elf`, except glibc and the machine's NVIDIA libraries. Returns 1, packing
# nothing, when the closure needs a fabric library and `skip_fabric` is set (a plugin).
pack_closure() {
  local elf=$1 skip_fabric=${2:-0} soname path
  local -a mine=()
  while read -r soname path; do
    is_glibc "$soname" && continue
    matches_any "$soname" "${machine_cuda_patterns[@]}" && continue
    if [ "$skip_fabric" -eq 1 ] && matches_any "$soname" "${fabric_library_patterns[@]}"; then
      return 1
    fi
    if [ "$path" = not-found ]; then
      echo "bundle.sh: $elf needs $soname, which is not found here" >&2
      exit 1
    fi
    mine+=("$path" "$soname")
  done < <(needed_libraries "$elf")
  local i
  for ((i = 0; i < ${#mine[@]}; i += 2)); do pack_file "${mine[i]}" "${mine[i + 1]}"; done
  return 0
}

echo "bundle.sh: packing the programs and their libraries"
for program in "${programs[@]}"; do
  case "$program" in
    app/*) cp "$build_dir/$program" "$top/bin/" ;;
    *) cp "$build_dir/$program" "$top/tests/" ;;
  esac
  pack_closure "$build_dir/$program"
done
# On the loader's path in the bundle (library_dirs.txt), where the programs' dlopen finds it.
pack_file "$cuda_module"
pack_closure "$cuda_module"
for benchmark in "${benchmarks[@]}"; do
  [ -x "$build_dir/tests/$benchmark" ] || continue  # built without the benchmarks
  cp "$build_dir/tests/$benchmark" "$top/bench/"
  pack_closure "$build_dir/tests/$benchmark"
done

# Open MPI: the launcher, its plugins (loaded by path from pkglibdir, not through the loader's
# search), help texts and settings. OPAL_PREFIX rebases the paths under the build's prefix, so
# root/ keeps them where they are relative to it.
ompi_path() { ompi_info --parsable --path "$1" | awk -F: -v key="$1" '$2 == key { print $3; exit }'; }
ompi_prefix=$(ompi_path prefix)
mpirun_path=$(readlink -f "$(command -v mpirun)")
cp "$mpirun_path" "$top/bin/mpirun"
pack_closure "$mpirun_path"
# A program started without mpirun (a singleton, e.g. a one-rank tessera run) starts orted from
# the relocated bindir itself, so it goes there too.
if [ -x "$(ompi_path bindir)/orted" ]; then
  cp "$(ompi_path bindir)/orted" "$top/bin/orted"
  pack_file "$(ompi_path bindir)/orted"
  pack_closure "$(ompi_path bindir)/orted"
fi
left_out=()
for plugin in "$(ompi_path pkglibdir)"/*.so; do
  if pack_closure "$plugin" 1; then pack_file "$plugin"; else left_out+=("$(basename "$plugin")"); fi
done
mkdir -p "$top/root$(ompi_path pkgdatadir)" "$top/root$ompi_prefix/etc"
cp -r "$(ompi_path pkgdatadir)/." "$top/root$(ompi_path pkgdatadir)/"
# Settings sit outside the prefix (/etc/openmpi) and move with OPAL_SYSCONFDIR.
cp "$(ompi_path sysconfdir)/openmpi-mca-params.conf" "$top/root$ompi_prefix/etc/"

# PMIx (Open MPI's process management, loaded by one of its plugins) keeps its own plugins and
# help texts beside its library: <prefix>/lib/libpmix.so.N, <prefix>/lib/pmix/, <prefix>/share/pmix/.
pmix_library=$(find "$top/root" -name 'libpmix.so.*' -print -quit)
pmix_prefix=
if [ -n "$pmix_library" ]; then
  pmix_prefix=$(dirname "$(dirname "${pmix_library#"$top/root"}")")
  for plugin in "$pmix_prefix"/lib/pmix/*.so; do
    [ -e "$plugin" ] || continue
    if pack_closure "$plugin" 1; then pack_file "$plugin"; else left_out+=("$(basename "$plugin")"); fi
  done
  if [ -d "$pmix_prefix/share/pmix" ]; then
    mkdir -p "$top/root$pmix_prefix/share/pmix"
    cp -r "$pmix_prefix/share/pmix/." "$top/root$pmix_prefix/share/pmix/"
  fi
fi

# hwloc's plugins stay behind (tools/gpu/environment.sh points hwloc at this empty folder).
mkdir -p "$top/hwloc-plugins"

# Where the libraries landed, for LD_LIBRARY_PATH (plugin folders are loaded by path).
(cd "$top" && find root -name '*.so*' -type f ! -path '*/openmpi3/*' ! -path '*/lib/pmix/*' \
  -printf '%h\n' | sort -u) >"$top/library_dirs.txt"

# The newest glibc symbol version any packed file needs: campaign.sh checks the machine has it.
newest_glibc=$(find "$top" -type f \( -name '*.so*' -o -perm -u+x \) -exec objdump -T {} + \
  2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -u -V | tail -n 1)
{
  echo "tessera GPU bundle, built $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  "$build_dir/app/tessera" --version
  echo "glibc needed: ${newest_glibc#GLIBC_}"
  echo "open_mpi_prefix: $ompi_prefix"
  echo "pmix_prefix: $pmix_prefix"
  echo "left out (fabric plugins): ${left_out[*]:-none}"
  echo "files:"
  (cd "$top" && find . -type f | sort)
} >"$top/manifest.txt"

mkdir -p "$(dirname "$output")"
echo "bundle.sh: compressing $(du -sh "$top" | cut -f1) into $output"
tar -C "$stage" -cf - tessera-gpu | xz -T0 "-$xz_level" >"$output.partial"
mv "$output.partial" "$output"
size=$(stat -c %s "$output")
echo "bundle.sh: $output: $((size / 1024 / 1024)) MiB ($size bytes)"
# A device call carries the tracked files and the archive together, 64 MiB in all: the archive
# gets what the tree leaves, less 1 MiB for untracked files, and never more than 60 MiB.
# (A tracked file deleted in the work tree and not yet staged makes du fail; the rest still count.)
tree=$(git -C "$repo" ls-files -z | (cd "$repo" && xargs -0 du -cb 2>/dev/null) | tail -n 1 | cut -f1) || true
limit=$((64 * 1024 * 1024 - ${tree:-0} - 1024 * 1024))
[ "$limit" -gt $((60 * 1024 * 1024)) ] && limit=$((60 * 1024 * 1024))
if [ "$size" -ge "$limit" ]; then
  echo "bundle.sh: the archive ($size bytes) is over the $limit bytes that the tracked files" \
    "(${tree:-0} bytes) leave of the 64 MiB a device call carries" >&2
  exit 1
fi

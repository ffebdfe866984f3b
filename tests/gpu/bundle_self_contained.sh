#!/usr/bin/env bash
# The GPU bundle (tools/gpu/bundle.sh) is self-contained: unpacked, with the loader restricted to
# the bundle's folders, this machine's glibc and the NVIDIA libraries a GPU machine brings (here
# this machine's cuDNN, NCCL and cuBLAS, standing in for the pip packages), every packed program,
# library and plugin resolves every library it needs, none from this machine's own folders, except
# the NVIDIA driver; `tessera --version` runs so restricted and names the libraries it loaded;
# the packed mpirun runs 2 ranks, loading no library or plugin from this machine's Open MPI.
# Usage: bundle_self_contained.sh ARCHIVE NVIDIA_LIBRARY_DIR...
set -uo pipefail
archive=$1
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/gpu/libraries.sh
source "$here/../../tools/gpu/libraries.sh"
# shellcheck source=tools/gpu/environment.sh
source "$here/../../tools/gpu/environment.sh"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

size=$(stat -c %s "$archive")
[ "$size" -lt $((60 * 1024 * 1024)) ] || fail "the archive is $size bytes, over 60 MiB"
tar -C "$scratch" -xJf "$archive" || { echo "FAIL cannot unpack $archive"; exit 1; }
bundle="$scratch/tessera-gpu"

# glibc alone, in a folder of its own (the loader reports the folder it opened a library from).
glibc="$scratch/glibc"
mkdir -p "$glibc"
for soname in "${glibc_sonames[@]}"; do
  path=$(ldconfig -p | awk -v name="$soname" '$1 == name && /x86-64/ { print $NF; exit }')
  [ -n "$path" ] && ln -s "$(readlink -f "$path")" "$glibc/$soname"
done
loader="$glibc/ld-linux-x86-64.so.2"
[ -e "$loader" ] || { echo "FAIL no x86-64 loader in ldconfig's cache"; exit 1; }
# The NVIDIA libraries a GPU machine's pip packages hold, and nothing else from their folders.
nvidia="$scratch/nvidia"
mkdir -p "$nvidia"
for folder in "$@"; do
  for path in "$folder"/lib*.so.*; do
    name=$(basename "$path")
    [ -e "$nvidia/$name" ] && continue
    if matches_any "$name" "${machine_cuda_patterns[@]}" && ! [[ $name =~ ^libcuda\. ]]; then
      ln -s "$(readlink -f "$path")" "$nvidia/$name"
    fi
  done
done
bundle_environment "$bundle" "$glibc" "$nvidia"  # what campaign.sh sets, glibc and NVIDIA's last
library_path=${bundle_env[0]#LD_LIBRARY_PATH=}

# Every ELF file: programs, libraries, plugins.
checked=0
while read -r elf; do
  checked=$((checked + 1))
  # The loader's own listing, searching the restricted folders first and no cache; what it then
  # finds elsewhere (its built-in folders, a RUNPATH) is a library the bundle lacks.
  while read -r soname arrow path rest; do
    [ "$arrow" = "=>" ] || continue
    if [ "$path" = "not" ]; then
      [[ $soname =~ ^libcuda\.so ]] || fail "$(basename "$elf"): $soname not found"
      continue
    fi
    case "$path" in
      "$bundle"/* | "$glibc"/* | "$nvidia"/*) ;;
      *) fail "$(basename "$elf"): $soname resolved outside the bundle: $path" ;;
    esac
  done < <("$loader" --list --inhibit-cache --library-path "$library_path" "$elf" 2>&1)
done < <(find "$bundle" -type f -exec sh -c 'head -c 4 "$1" | grep -q ELF' _ {} \; -print)
[ "$checked" -gt 100 ] || fail "only $checked ELF files in the bundle"
for program in bin/tessera bin/mpirun tests/tessera_kernels_tests tests/tessera_kernels_mpi_tests; do
  [ -x "$bundle/$program" ] || fail "$program is not in the bundle"
done

# tessera runs so restricted and reports the libraries it loaded: the CUDA ones through its CUDA
# module, found on the bundle's library path.
version=$("$loader" --inhibit-cache --library-path "$library_path" "$bundle/bin/tessera" --version 2>&1)
[ $? -eq 0 ] || fail "tessera --version: $version"
grep -q "^tessera [0-9]" <<<"$version" || fail "tessera --version printed no version: $version"
grep -q "oneDNN [1-9]" <<<"$version" || fail "tessera --version names no oneDNN: $version"
devices=$(LD_DEBUG=files "$loader" --inhibit-cache --library-path "$library_path" \
  "$bundle/bin/tessera" devices 2>"$scratch/devices.ld")
[ $? -eq 0 ] || fail "tessera devices: $devices"
grep -q "^libraries: .*cuDNN [1-9]" <<<"$devices" || fail "tessera devices names no cuDNN: $devices"
grep -q "calling init: $bundle/.*/libtessera_cuda.so" "$scratch/devices.ld" ||
  fail "the CUDA module was not loaded from the bundle: $(grep libtessera_cuda "$scratch/devices.ld")"

# The packed mpirun on 2 ranks, relocated by OPAL_PREFIX: every library and plugin any of its
# processes initialises must come from the bundle or glibc (the loader's debug output names them).
mkdir -p "$scratch/ld-debug"
output=$(env "${bundle_env[@]}" OMPI_MCA_mca_base_component_show_load_errors=1 \
  LD_DEBUG=files LD_DEBUG_OUTPUT="$scratch/ld-debug/trace" \
  "$bundle/bin/mpirun" -np 2 --oversubscribe -x LD_DEBUG -x LD_DEBUG_OUTPUT \
  "$bundle/tests/tessera_kernels_mpi_tests" --gtest_filter='MpiCommunicator.WorldHasEveryRank' 2>&1)
[ $? -eq 0 ] || fail "packed mpirun -np 2: $output"
grep -q "PASSED.*1 test" <<<"$output" || fail "packed mpirun ran no test: $output"
initialised=$(cat "$scratch"/ld-debug/trace.* | grep -o 'calling init: [^ ]*' | awk '{ print $3 }' | sort -u)
[ -n "$initialised" ] || fail "no loader trace of the MPI run"
while read -r path; do
  case "$path" in
    "$bundle"/* | "$glibc"/* | "$nvidia"/*) ;;
    *) is_glibc "$(basename "$path")" || fail "the MPI run loaded $path from this machine" ;;
  esac
done <<<"$initialised"
grep -q "openmpi3/mca_btl_vader.so\|openmpi/mca_btl_vader.so" <<<"$initialised" ||
  fail "the MPI run loaded no shared-memory transport plugin from the bundle"

# A program started without mpirun (MPI's singleton start, as a one-rank `tessera run --backend
# real` is) finds the daemon it starts in the relocated bundle.
output=$(env "${bundle_env[@]}" PATH="$bundle/bin" "$bundle/tests/tessera_kernels_mpi_tests" \
  --gtest_filter='MpiCommunicator.AllreduceSumsFloatsAndDoubles' 2>&1)
[ $? -eq 0 ] || fail "a singleton MPI program in the bundle: $output"
grep -q "PASSED.*1 test" <<<"$output" || fail "the singleton MPI program ran no test: $output"

echo "$checked ELF files checked; $(grep -c . <<<"$initialised") libraries initialised by mpirun's ranks"
[ "$failures" -eq 0 ] && echo "the GPU bundle is self-contained"
exit $((failures > 0))

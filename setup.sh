#!/usr/bin/env bash
# Installs what Tessera needs (Debian packages, idempotently), then configures and builds it.
#   ./setup.sh                      Release build in build/
#   ./setup.sh --build-dir DIR      build elsewhere
#   ./setup.sh --cpu-only           without the CUDA parts
#   ./setup.sh --sanitize           with AddressSanitizer + UndefinedBehaviorSanitizer (clang, CPU parts)
#   ./setup.sh --fuzz               the libFuzzer targets too (implies --sanitize)
#   ./setup.sh --no-install         skip the package step
#   ./setup.sh --target NAME        build only this target (e.g. the fuzzer)
#   ./setup.sh --no-benchmarks      without the Google Benchmark binaries
#   ./setup.sh --unity              compile each target's sources in batches (CMake unity build)
#   ./setup.sh --test-shards N      ctest runs each test binary as N processes, not one per case
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

build_dir=build
cmake_args=(-DCMAKE_BUILD_TYPE=Release)
install=1
build_target=()
unity=OFF
test_shards=0
sanitize_args=(-DTESSERA_SANITIZE=ON -DTESSERA_CUDA=OFF -DCMAKE_C_COMPILER=clang-14
               -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo
               "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
               "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG")
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir=$2; shift ;;
    --cpu-only) cmake_args+=(-DTESSERA_CUDA=OFF) ;;
    # clang: the sanitized build in about half GCC's time; -O1 -g1: line numbers in the reports
    # at about half the compile time of -O2 -g (docs/measurements/2026-11-21.md, 2026-11-26.md).
    # nvcc takes none of the sanitizers' flags: the CUDA parts are left out.
    --sanitize) cmake_args+=("${sanitize_args[@]}") ;;
    --fuzz) cmake_args+=("${sanitize_args[@]}" -DTESSERA_FUZZ=ON) ;;
    --werror) cmake_args+=(-DTESSERA_WERROR=ON) ;;
    --no-install) install=0 ;;
    --target) build_target=(--target "$2"); shift ;;
    --no-benchmarks) cmake_args+=(-DTESSERA_BUILD_BENCHMARKS=OFF) ;;
    # A clean sanitized build in 41% of the time (the heavy headers are parsed once per
    # batch; docs/measurements/2026-11-29-unity-build.md); a change then recompiles its batch.
    --unity) unity=ON ;;
    # One process per test case costs a process start each (0.04 to 0.3 s, the sanitized ones
    # most) over some 1,900 cases: test.sh's builds run each binary in a few shards instead
    # (docs/measurements/2026-12-05-test-shards.md); without it `ctest -R Case` picks one case.
    --test-shards)
      test_shards=${2:-}
      [[ "$test_shards" =~ ^[0-9]+$ ]] && [ "$test_shards" -le 64 ] ||
        { echo "setup.sh: --test-shards takes a number of shards from 0 to 64, not '$test_shards'" >&2; exit 2; }
      shift ;;
    *) echo "setup.sh: unknown option '$1' (see the comment at the top of setup.sh)" >&2; exit 2 ;;
  esac
  shift
done

packages=(
  build-essential cmake ninja-build pkg-config clang-14 clang-format-14 libclang-rt-14-dev
  libomp-14-dev libxxhash-dev
  libsimgrid-dev libboost-dev libhdf5-dev libyaml-cpp-dev
  nlohmann-json3-dev libcli11-dev libdnnl-dev ocl-icd-opencl-dev libglpk-dev libopenmpi-dev openmpi-bin
  libgtest-dev libgmock-dev libbenchmark-dev python3-matplotlib python3-pandas python3-h5py
  python3-yaml python3-torch xz-utils  # xz: tools/gpu/bundle.sh's archive
  ccache  # rebuilds after a branch switch or in a second work tree take seconds
  libprotobuf-dev protobuf-compiler  # Chakra execution traces (tessera export --chakra)
)
if [ "$install" -eq 1 ]; then
  missing=()
  for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$package")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "setup.sh: installing ${missing[*]}"
    sudo_cmd=()
    [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
    export DEBIAN_FRONTEND=noninteractive
    "${sudo_cmd[@]}" apt-get update -qq
    "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

# ccache also serves another work tree of this repository when CCACHE_BASEDIR is its parent.
command -v ccache >/dev/null &&
  cmake_args+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
               -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
[ -f "$build_dir/CMakeCache.txt" ] && generator=()  # keep the generator of an existing build
cmake -S . -B "$build_dir" "${generator[@]}" "${cmake_args[@]}" -DCMAKE_UNITY_BUILD=$unity \
  -DTESSERA_TEST_SHARDS="$test_shards" >/dev/null
cmake --build "$build_dir" -j "$(nproc)" "${build_target[@]}"

#!/usr/bin/env bash
# The package check flags what setup.sh stops installing: with a package the build uses removed
# from a copy of setup.sh's list, the check fails and names it; with the list as shipped it passes.
#   check_packages_test.sh CHECK_SCRIPT BUILD_DIR SETUP_SCRIPT
set -uo pipefail
check=$1 build=$2 setup=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
mkdir "$work/reuse"  # the build's packages found once, for the three lists

"$check" --reuse "$work/reuse" "$build" "$setup" >"$work/shipped.log" 2>&1 ||
  { echo "FAIL: the check rejects setup.sh as shipped:"; cat "$work/shipped.log"; status=1; }

# libyaml-cpp-dev: headers and a library of the build; ocl-icd-opencl-dev: only oneDNN's CMake
# package needs it (the bug that broke a new machine's configure).
for package in libyaml-cpp-dev ocl-icd-opencl-dev; do
  sed -E "/^packages=\(/,/^\)/s/(^|[[:space:]])$package([[:space:]]|\$)/\1\2/" "$setup" >"$work/setup.sh"
  if grep -qE "(^|[[:space:]])$package([[:space:]]|\$)" "$work/setup.sh"; then
    echo "FAIL: could not remove $package from a copy of $setup"; status=1; continue
  fi
  "$check" --reuse "$work/reuse" "$build" "$work/setup.sh" >"$work/removed.log" 2>&1
  code=$?
  if [ "$code" -ne 1 ] || ! grep -qE "^  $package " "$work/removed.log"; then
    echo "FAIL: without $package in the list the check exited $code and said:"
    cat "$work/removed.log"
    status=1
  else
    echo "ok: without $package: $(grep -E "^  $package " "$work/removed.log")"
  fi
done
exit $status

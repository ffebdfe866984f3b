# shellcheck shell=bash
step_mpi() {
  local filter='*'
  [ "$dry_run" -eq 0 ] || filter='MpiCommunicator.*'  # ctest runs the rest here
  bounded_bundle "$bundle/bin/mpirun" -np 2 --oversubscribe -x OMP_NUM_THREADS=1 \
    "$bundle/tests/tessera_kernels_mpi_tests" --gtest_filter="$filter"
}

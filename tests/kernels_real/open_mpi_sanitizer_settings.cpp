// The tests here start MPI in-process (the real backend's trainer, one rank). Open MPI's own
// allocations at exit are not ours to fix: as for the mpirun tests (tests/kernels_mpi/
// open_mpi_leaks.supp), the sanitizer build suppresses leaks from its libraries, which it can
// name only when their components stay loaded and stacks are unwound without frame pointers.
// These hooks do it from the binary itself: ctest's per-test environment cannot carry a list
// through gtest_discover_tests. Open MPI refuses to run as root (CI containers) without the
// OMPI_ALLOW_RUN_AS_ROOT pair.
#include <cstdlib>

extern "C" const char* __lsan_default_suppressions() {
  return "leak:libmpi.so\nleak:libopen-pal.so\nleak:libopen-rte.so\nleak:libpmix.so\n"
         "leak:libhwloc.so\nleak:libevent\nleak:mca_\n";
}

extern "C" const char* __lsan_default_options() {
  return "fast_unwind_on_malloc=0";
}

namespace {

const bool kOpenMpiSettings = [] {
  ::setenv("OMPI_MCA_mca_base_component_disable_dlclose", "1", 0);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  return true;
}();

}  // namespace

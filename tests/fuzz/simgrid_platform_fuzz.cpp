// libFuzzer target: any byte string as a SimGrid platform file must pass the check or end in an
// InputError (SimGrid itself reads it in a child process, where it may abort). Any other
// exception, crash or sanitizer report in the check is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "tessera/core/common/input_error.hpp"
#include "tessera/simulator/platform/xml_platform_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  char path[] = "/tmp/tessera-platform-fuzz-XXXXXX.xml";
  const int fd = ::mkstemps(path, 4);
  if (fd < 0) return 0;
  const bool written = ::write(fd, data, size) == static_cast<ssize_t>(size);
  ::close(fd);
  if (written) {
    try {
      tessera::sim::check_xml_platform(path, tessera::sim::XmlGpuMapping{"gpu-{i}", 2});
    } catch (const tessera::InputError&) {
      // The expected outcome for malformed input.
    }
  }
  ::unlink(path);
  return 0;
}

#pragma once
// Checks a user's SimGrid platform file before anything is simulated on it, so that a broken file
// is a clear input error (exit 2) at `tessera validate` rather than an abort inside SimGrid in
// the middle of a sweep. SimGrid reads the file in a child process (some malformed files make it
// abort); its complaints come back as "file:line: element: problem".
#include <cstdint>
#include <optional>
#include <string>

#include "tessera/core/loading/scenario_loader.hpp"

namespace tessera::sim {

// The GPUs a scenario maps onto the file's hosts (platform.simgrid_xml).
struct XmlGpuMapping {
  std::string host_pattern;  // e.g. "gpu-{i}"
  std::int64_t gpus = 0;     // the largest sweep point's GPU count
};

// Throws InputError naming the file and, where SimGrid or the check knows it, the line and
// element: the file must load; every host have a positive, finite speed; every link a positive,
// finite bandwidth and a non-negative, finite latency; with a mapping, every GPU's host exist;
// and there must be a route (at least one link) from the first GPU host (without a mapping, the
// first host) to every other one and back.
void check_xml_platform(const std::string& xml_path, const std::optional<XmlGpuMapping>& mapping);

// The scenario's platform file, if it names one, with the GPUs of its largest sweep point.
void check_scenario_platform(const LoadedScenario& loaded);

}  // namespace tessera::sim

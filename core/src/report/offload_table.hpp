#pragma once
// describe's view of memory virtualisation (vDNN): per offload policy, at one sweep point, the
// peak and time-averaged device memory, the bytes moved to host memory per step, the layers
// whose outputs move, and whether the point fits.
#include <string>

#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/loading/scenario_loader.hpp"

namespace tessera {

// Whether describe shows the table: the scenario offloads, or some point does not fit.
bool shows_offloading(const LoadedScenario& loaded);

std::string offload_table(const LoadedScenario& loaded, const SweepPoint& point,
                          const ProfileDatabase* profiles);

}  // namespace tessera

#pragma once
// Many pieces of work, each in its own forked child (SimGrid allows one engine per process), with
// at most `jobs` children alive at once. A fork shares the parent's memory copy-on-write, so a
// child starts with the loaded scenario and model already built: no process start, no parsing.
#include <functional>
#include <vector>

#include "process/child_process.hpp"
#include "tessera/simulator/run_limits.hpp"

namespace tessera::sim {

// Outcomes in the order of `work`; a child that dies or answers nothing has no message. When the
// deadline passes, running children are killed and no more start: their outcomes are cut_off.
std::vector<ChildOutcome> run_in_children(const std::vector<std::function<nlohmann::json()>>& work,
                                          int jobs, const RunLimits& limits = {});

}  // namespace tessera::sim

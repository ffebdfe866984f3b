#pragma once
// Many pieces of work, each in its own forked child (SimGrid allows one engine per process), with
// at most `jobs` children alive at once. A fork shares the parent's memory copy-on-write, so a
// child starts with the loaded scenario and model already built: no process start, no parsing.
#include <functional>
#include <vector>

#include "process/child_process.hpp"

namespace tessera::sim {

// Outcomes in the order of `work`; a child that dies or answers nothing has no message.
std::vector<ChildOutcome> run_in_children(const std::vector<std::function<nlohmann::json()>>& work,
                                          int jobs);

}  // namespace tessera::sim

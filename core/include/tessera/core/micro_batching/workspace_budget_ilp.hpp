#pragma once
// Whole-network workspace budget (mu-cuDNN's "workspace division"): every kernel has its own
// workspace buffer and all of them together must fit a budget. Each kernel offers configurations
// (the Pareto plans of micro_batch_planner.hpp); choose exactly one per kernel, minimising the
// total time subject to the summed workspace <= budget. An integer linear program with one binary
// per (kernel, configuration), solved exactly by GLPK's branch and cut.
#include <cstddef>
#include <vector>

namespace tessera {

struct WorkspaceChoice {
  double seconds = 0;
  double workspace_bytes = 0;
};

struct BudgetAssignment {
  std::vector<std::size_t> chosen;  // per kernel, the index of its configuration
  double seconds = 0;               // total over kernels
  double workspace_bytes = 0;       // total over kernels
  bool budget_met = true;  // false: even the least workspace exceeds the budget (see below)
};

// When the least-workspace configurations together exceed the budget, the result is those
// (the fastest of equal workspace) with budget_met false: never an error. Throws
// std::invalid_argument if a kernel offers no configuration.
BudgetAssignment solve_workspace_budget(const std::vector<std::vector<WorkspaceChoice>>& kernels,
                                        double budget_bytes);

}  // namespace tessera

#include "tessera/core/micro_batching/workspace_budget_ilp.hpp"

#include <glpk.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

namespace tessera {
namespace {

BudgetAssignment totals_of(const std::vector<std::vector<WorkspaceChoice>>& kernels,
                           std::vector<std::size_t> chosen, bool budget_met) {
  BudgetAssignment result{std::move(chosen), 0, 0, budget_met};
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    result.seconds += kernels[k][result.chosen[k]].seconds;
    result.workspace_bytes += kernels[k][result.chosen[k]].workspace_bytes;
  }
  return result;
}

// Per kernel the configuration `better` prefers.
template <typename Better>
std::vector<std::size_t> each_kernel_best(const std::vector<std::vector<WorkspaceChoice>>& kernels,
                                          Better better) {
  std::vector<std::size_t> chosen;
  for (const auto& choices : kernels) {
    std::size_t best = 0;
    for (std::size_t c = 1; c < choices.size(); ++c) {
      if (better(choices[c], choices[best])) best = c;
    }
    chosen.push_back(best);
  }
  return chosen;
}

bool less_workspace(const WorkspaceChoice& a, const WorkspaceChoice& b) {
  return a.workspace_bytes < b.workspace_bytes ||
         (a.workspace_bytes == b.workspace_bytes && a.seconds < b.seconds);
}

bool faster(const WorkspaceChoice& a, const WorkspaceChoice& b) {
  return a.seconds < b.seconds || (a.seconds == b.seconds && a.workspace_bytes < b.workspace_bytes);
}

struct ProblemDeleter {
  void operator()(glp_prob* problem) const { glp_delete_prob(problem); }
};

// Solves the ILP with the budget row's right-hand side `rhs` (in units of `scale` bytes).
// Returns the chosen configuration per kernel, or an empty vector if GLPK found no solution.
std::vector<std::size_t> solve_ilp(const std::vector<std::vector<WorkspaceChoice>>& kernels,
                                   double scale, double rhs, double time_scale) {
  std::unique_ptr<glp_prob, ProblemDeleter> problem(glp_create_prob());
  glp_prob* lp = problem.get();
  glp_set_obj_dir(lp, GLP_MIN);
  const int kernel_rows = static_cast<int>(kernels.size());
  const int budget_row = kernel_rows + 1;
  glp_add_rows(lp, budget_row);
  for (int k = 1; k <= kernel_rows; ++k) glp_set_row_bnds(lp, k, GLP_FX, 1.0, 1.0);
  glp_set_row_bnds(lp, budget_row, GLP_UP, 0.0, rhs);

  std::size_t columns = 0;
  for (const auto& choices : kernels) columns += choices.size();
  glp_add_cols(lp, static_cast<int>(columns));
  // GLPK's sparse matrix is 1-based: entry 0 of each array is unused.
  std::vector<int> row_index{0}, column_index{0};
  std::vector<double> value{0};
  int column = 0;
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    for (const auto& choice : kernels[k]) {
      ++column;
      glp_set_col_kind(lp, column, GLP_BV);
      glp_set_obj_coef(lp, column, choice.seconds * time_scale);
      row_index.push_back(static_cast<int>(k) + 1);
      column_index.push_back(column);
      value.push_back(1.0);
      if (choice.workspace_bytes > 0) {
        row_index.push_back(budget_row);
        column_index.push_back(column);
        value.push_back(choice.workspace_bytes / scale);
      }
    }
  }
  glp_load_matrix(lp, static_cast<int>(value.size()) - 1, row_index.data(), column_index.data(),
                  value.data());

  glp_iocp parameters;
  glp_init_iocp(&parameters);
  parameters.presolve = GLP_ON;  // solves the LP relaxation itself
  parameters.msg_lev = GLP_MSG_OFF;
  parameters.mip_gap = 0.0;  // exact: no early stop at a relative gap
  const int previous_output = glp_term_out(GLP_OFF);
  const int code = glp_intopt(lp, &parameters);
  glp_term_out(previous_output);
  if (code != 0 || glp_mip_status(lp) != GLP_OPT) return {};

  std::vector<std::size_t> chosen;
  column = 0;
  for (const auto& choices : kernels) {
    std::size_t pick = choices.size();
    for (std::size_t c = 0; c < choices.size(); ++c) {
      if (glp_mip_col_val(lp, ++column) > 0.5) pick = c;
    }
    if (pick == choices.size()) return {};
    chosen.push_back(pick);
  }
  return chosen;
}

}  // namespace

BudgetAssignment solve_workspace_budget(const std::vector<std::vector<WorkspaceChoice>>& kernels,
                                        double budget_bytes) {
  for (const auto& choices : kernels) {
    if (choices.empty()) throw std::invalid_argument("a kernel offers no configuration");
  }
  const auto fastest = totals_of(kernels, each_kernel_best(kernels, faster), true);
  if (fastest.workspace_bytes <= budget_bytes) return fastest;  // the budget does not bind
  const auto least = totals_of(kernels, each_kernel_best(kernels, less_workspace), true);
  if (least.workspace_bytes > budget_bytes) {
    return {least.chosen, least.seconds, least.workspace_bytes, false};
  }
  // Scaled so the budget row reads "<= 1" and the objective is about 1e3: GLPK's tolerances are
  // relative to values of order one.
  const double scale = budget_bytes > 0 ? budget_bytes : 1.0;
  const double time_scale = fastest.seconds > 0 ? 1e3 / fastest.seconds : 1.0;
  double rhs = budget_bytes / scale;
  // GLPK accepts a row that exceeds its bound by its feasibility tolerance (~1e-7 relative);
  // tighten the bound until the chosen workspaces fit exactly. The least-workspace assignment
  // fits, so the loop ends.
  for (int attempt = 0; attempt < 8; ++attempt) {
    const auto chosen = solve_ilp(kernels, scale, rhs, time_scale);
    if (chosen.empty()) break;
    auto result = totals_of(kernels, chosen, true);
    if (result.workspace_bytes <= budget_bytes) return result;
    rhs -= (result.workspace_bytes - budget_bytes) / scale;
  }
  // The problem is feasible (the least-workspace assignment fits), so this is GLPK failing.
  throw std::runtime_error("GLPK found no optimal assignment for a feasible workspace budget");
}

}  // namespace tessera

// Per-kernel dynamic programming over b = 1..B, keeping the Pareto front of every b (see
// micro_batch_planner.hpp), and reconstruction of the plans on the front of B.
#include <algorithm>
#include <map>

#include "pareto.hpp"
#include "tessera/core/micro_batching/micro_batch_planner.hpp"

namespace tessera {
namespace {

// A composition of b: its first micro-batch runs `option`; the rest, if any, is entry
// `rest_entry` of front(rest_batch).
struct FrontEntry {
  double seconds = 0;
  double workspace_bytes = 0;
  std::size_t option = 0;
  std::int64_t rest_batch = 0;  // 0: a single micro-batch
  std::size_t rest_entry = 0;
};

std::vector<FrontEntry> front_of(std::vector<FrontEntry> candidates) {
  return planner::pareto_front(
      std::move(candidates), [](const FrontEntry& e) { return e.workspace_bytes; },
      [](const FrontEntry& e) { return e.seconds; });
}

MicroBatchPlan reconstruct(const std::vector<std::vector<FrontEntry>>& fronts,
                           const std::vector<KernelOption>& options, std::int64_t batch,
                           std::size_t entry) {
  MicroBatchPlan plan;
  for (;;) {
    const auto& e = fronts[static_cast<std::size_t>(batch)][entry];
    const auto& o = options[e.option];
    plan.micro_batches.push_back({o.micro_batch, o.algorithm, o.seconds, o.workspace_bytes});
    if (e.rest_batch == 0) break;
    batch = e.rest_batch;
    entry = e.rest_entry;
  }
  return plan;
}

}  // namespace

std::vector<MicroBatchPlan> pareto_plans(const std::vector<KernelOption>& options,
                                         std::int64_t batch) {
  if (batch <= 0) return {};
  std::map<std::int64_t, std::vector<std::size_t>> by_size;
  for (std::size_t i = 0; i < options.size(); ++i) {
    const auto size = options[i].micro_batch;
    if (size > 0 && size <= batch) by_size[size].push_back(i);
  }
  std::vector<std::vector<FrontEntry>> fronts(static_cast<std::size_t>(batch) + 1);
  for (std::int64_t b = 1; b <= batch; ++b) {
    std::vector<FrontEntry> candidates;
    if (auto single = by_size.find(b); single != by_size.end()) {
      for (auto i : single->second) {
        candidates.push_back({options[i].seconds, options[i].workspace_bytes, i, 0, 0});
      }
    }
    for (const auto& [size, indices] : by_size) {
      if (2 * size > b) break;
      const auto& rest = fronts[static_cast<std::size_t>(b - size)];
      for (auto i : indices) {
        // Rests needing no more workspace than this option all combine to the option's
        // workspace, so the fastest of them (the last, fronts being sorted) beats the others.
        const auto above = std::upper_bound(
            rest.begin(), rest.end(), options[i].workspace_bytes,
            [](double workspace, const FrontEntry& e) { return workspace < e.workspace_bytes; });
        const auto first =
            static_cast<std::size_t>(std::max<std::ptrdiff_t>(0, above - rest.begin() - 1));
        for (std::size_t k = first; k < rest.size(); ++k) {
          candidates.push_back({options[i].seconds + rest[k].seconds,
                                std::max(options[i].workspace_bytes, rest[k].workspace_bytes), i,
                                b - size, k});
        }
      }
    }
    fronts[static_cast<std::size_t>(b)] = front_of(std::move(candidates));
  }
  std::vector<MicroBatchPlan> plans;
  for (std::size_t k = 0; k < fronts.back().size(); ++k) {
    plans.push_back(reconstruct(fronts, options, batch, k));
  }
  return plans;
}

std::optional<LimitedPlan> choose_within_limit(const std::vector<MicroBatchPlan>& front,
                                               double workspace_limit_bytes) {
  if (front.empty()) return std::nullopt;
  // The front is ordered by increasing workspace and decreasing time.
  const MicroBatchPlan* best = nullptr;
  for (const auto& plan : front) {
    if (plan.workspace_bytes() <= workspace_limit_bytes) best = &plan;
  }
  if (best) return LimitedPlan{*best, true};
  return LimitedPlan{front.front(), false};
}

std::vector<MicroBatchPlan> pareto_plans_within(const std::vector<ProfileEntry>& rows,
                                                MicroBatchPolicy policy, std::int64_t batch,
                                                double workspace_limit_bytes) {
  // Options over the limit cannot be part of a plan that meets it; dropping them first keeps the
  // fronts small. Only when nothing fits does the whole table matter.
  auto front = pareto_plans(kernel_options(rows, policy, batch, workspace_limit_bytes), batch);
  if (!front.empty()) return front;
  return pareto_plans(kernel_options(rows, policy, batch), batch);
}

std::optional<LimitedPlan> plan_kernel(const std::vector<ProfileEntry>& rows,
                                       MicroBatchPolicy policy, std::int64_t batch,
                                       double workspace_limit_bytes) {
  return choose_within_limit(pareto_plans_within(rows, policy, batch, workspace_limit_bytes),
                             workspace_limit_bytes);
}

}  // namespace tessera

// Which (micro-batch, algorithm) options the planner may combine for one kernel.
#include <algorithm>
#include <map>

#include "pareto.hpp"
#include "tessera/core/micro_batching/micro_batch_planner.hpp"

namespace tessera {

std::vector<std::int64_t> candidate_micro_batch_sizes(MicroBatchPolicy policy, std::int64_t batch) {
  std::vector<std::int64_t> sizes;
  if (batch <= 0) return sizes;
  switch (policy) {
    case MicroBatchPolicy::undivided:
      sizes.push_back(batch);
      break;
    case MicroBatchPolicy::power_of_two:
      for (std::int64_t size = 1; size < batch; size *= 2) sizes.push_back(size);
      sizes.push_back(batch);
      break;
    case MicroBatchPolicy::all:
      for (std::int64_t size = 1; size <= batch; ++size) sizes.push_back(size);
      break;
  }
  return sizes;
}

std::vector<KernelOption> kernel_options(const std::vector<ProfileEntry>& rows,
                                         MicroBatchPolicy policy, std::int64_t batch,
                                         double workspace_limit_bytes) {
  const auto sizes = candidate_micro_batch_sizes(policy, batch);
  std::map<std::int64_t, std::vector<KernelOption>> by_size;
  for (const auto& row : rows) {
    if (!row.ok || row.workspace_bytes > workspace_limit_bytes) continue;
    if (!std::binary_search(sizes.begin(), sizes.end(), row.micro_batch)) continue;
    by_size[row.micro_batch].push_back(
        {row.micro_batch, row.algorithm, row.time_seconds, row.workspace_bytes});
  }
  std::vector<KernelOption> options;
  for (auto& [size, candidates] : by_size) {
    auto front = planner::pareto_front(
        std::move(candidates), [](const KernelOption& o) { return o.workspace_bytes; },
        [](const KernelOption& o) { return o.seconds; });
    options.insert(options.end(), front.begin(), front.end());
  }
  return options;
}

}  // namespace tessera

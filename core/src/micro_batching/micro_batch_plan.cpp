#include "tessera/core/micro_batching/micro_batch_plan.hpp"

#include <algorithm>

namespace tessera {

std::int64_t MicroBatchPlan::samples() const {
  std::int64_t total = 0;
  for (const MicroBatch& micro_batch : micro_batches) total += micro_batch.samples;
  return total;
}

double MicroBatchPlan::seconds() const {
  double total = 0;
  for (const MicroBatch& micro_batch : micro_batches) total += micro_batch.seconds;
  return total;
}

double MicroBatchPlan::workspace_bytes() const {
  double largest = 0;
  for (const MicroBatch& micro_batch : micro_batches) {
    largest = std::max(largest, micro_batch.workspace_bytes);
  }
  return largest;
}

std::string describe(const MicroBatchPlan& plan) {
  // Consecutive micro-batches of the same size and algorithm print as one "count x size algo".
  std::string text;
  for (std::size_t i = 0; i < plan.micro_batches.size();) {
    const MicroBatch& first = plan.micro_batches[i];
    std::size_t run = i + 1;
    while (run < plan.micro_batches.size() && plan.micro_batches[run].samples == first.samples &&
           plan.micro_batches[run].algorithm == first.algorithm) {
      ++run;
    }
    if (!text.empty()) text += " + ";
    text += std::to_string(run - i) + " x " + std::to_string(first.samples) + " " + first.algorithm;
    i = run;
  }
  return text.empty() ? "(empty)" : text;
}

}  // namespace tessera

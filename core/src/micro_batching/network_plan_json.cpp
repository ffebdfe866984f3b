// The network plan as results record it (analysis/RESULT_SCHEMA.md, "micro_batching").
#include "tessera/core/micro_batching/network_micro_batch_plan.hpp"

#include <nlohmann/json.hpp>

namespace tessera {
namespace {

nlohmann::json optional_number(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json to_json(const ConvKernelPlan& kernel) {
  nlohmann::json micro_batches = nlohmann::json::array();
  for (const auto& mb : kernel.plan.micro_batches) {
    micro_batches.push_back({{"samples", mb.samples},
                             {"algorithm", mb.algorithm},
                             {"s", mb.seconds},
                             {"workspace_bytes", mb.workspace_bytes}});
  }
  return {{"layer", kernel.layer_name},
          {"direction", to_string(kernel.direction)},
          {"stage", kernel.stage},
          {"batch", kernel.batch},
          {"provenance", to_string(kernel.provenance)},
          {"limit_met", kernel.limit_met},
          {"s", kernel.plan.seconds()},
          {"workspace_bytes", kernel.plan.workspace_bytes()},
          {"undivided_s", optional_number(kernel.undivided_seconds)},
          {"speedup", optional_number(kernel.speedup())},
          {"micro_batches", micro_batches}};
}

}  // namespace

nlohmann::json to_json(const NetworkMicroBatchPlan& plan) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& kernel : plan.kernels) kernels.push_back(to_json(kernel));
  return {{"policy", to_string(plan.settings.policy)},
          {"mode", to_string(plan.settings.mode)},
          {"workspace_limit_bytes", plan.settings.workspace_limit_bytes},
          {"limit_met", plan.limit_met()},
          {"conv_s", plan.seconds()},
          {"undivided_conv_s", optional_number(plan.undivided_seconds())},
          {"speedup", optional_number(plan.speedup())},
          {"workspace_bytes", plan.workspace_bytes()},
          {"kernels", kernels}};
}

}  // namespace tessera

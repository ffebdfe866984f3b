#include "micro_batching_table.hpp"

#include <cstdio>
#include <sstream>

#include "tessera/core/common/quantity.hpp"
#include "tessera/core/common/text_table.hpp"

namespace tessera {
namespace {

std::string times(const std::optional<double>& speedup) {
  if (!speedup) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.2fx", *speedup);
  return text;
}

std::string plan_text(const ConvKernelPlan& kernel) {
  if (kernel.provenance != Provenance::profile) {
    return "1 x " + std::to_string(kernel.batch) + " (no profile: roofline)";
  }
  return describe(kernel.plan) + (kernel.limit_met ? "" : " (over the limit)");
}

}  // namespace

std::string micro_batching_table(const NetworkMicroBatchPlan& plan) {
  const bool whole_network = plan.settings.mode == MicroBatchMode::whole_network;
  TextTable table({"layer", "direction", "stage", "batch", "micro-batches x size algorithm", "time",
                   "workspace", "undivided", "speed-up"},
                  {TextTable::Align::left, TextTable::Align::left, TextTable::Align::right,
                   TextTable::Align::right, TextTable::Align::left});
  for (const auto& kernel : plan.kernels) {
    table.add_row({kernel.layer_name, to_string(kernel.direction), std::to_string(kernel.stage),
                   std::to_string(kernel.batch), plan_text(kernel),
                   format_seconds(kernel.plan.seconds()),
                   format_bytes(kernel.plan.workspace_bytes()),
                   kernel.undivided_seconds ? format_seconds(*kernel.undivided_seconds) : "-",
                   times(kernel.speedup())});
  }
  std::ostringstream out;
  out << "\nMicro-batching plan (policy " << to_string(plan.settings.policy) << ", "
      << to_string(plan.settings.mode) << ", "
      << (whole_network ? "workspace budget per GPU " : "workspace limit per kernel ")
      << format_bytes(plan.settings.workspace_limit_bytes)
      << "; undivided = the best single algorithm for the whole batch under the same "
      << (whole_network ? "budget" : "limit") << ")\n";
  if (plan.kernels.empty()) return out.str() + "no convolution kernels\n";
  out << table.render();
  out << "Conv kernels: " << format_seconds(plan.seconds()) << " per step";
  if (const auto undivided = plan.undivided_seconds()) {
    out << ", undivided " << format_seconds(*undivided) << ", speed-up " << times(plan.speedup());
  }
  out << "; workspace " << format_bytes(plan.workspace_bytes())
      << (whole_network ? " (all kernels of a GPU together)" : " (largest kernel)");
  if (!plan.limit_met()) out << "; the limit cannot be met, least-workspace plans taken";
  out << "\n";
  return out.str();
}

}  // namespace tessera

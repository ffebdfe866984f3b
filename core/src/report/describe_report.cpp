#include "tessera/core/report/describe_report.hpp"

#include <cstdio>
#include <map>
#include <sstream>

#include "micro_batching_table.hpp"
#include "offload_table.hpp"
#include "tessera/core/common/quantity.hpp"
#include "tessera/core/common/text_table.hpp"
#include "tessera/core/model/layer_cost.hpp"
#include "tessera/core/point/point_input.hpp"
#include "tessera/core/scenario/nvlink_rings.hpp"
#include "tessera/core/strategy/input_source.hpp"
#include "tessera/core/strategy/memory_estimate.hpp"
#include "tessera/core/time_to_train/time_to_train.hpp"

namespace tessera {
namespace {

using Align = TextTable::Align;

// The layers of each tensor split (tensor_split.hpp), for the layer table's point.
std::string tensor_split_text(const ModelGraph& model, const ShardPlan& plan) {
  std::map<std::string, std::vector<std::string>> by_split;
  std::vector<std::string> gathered;
  for (std::size_t i = 0; i < model.layers().size(); ++i) {
    const auto& split = plan.layers[i].tensor;
    by_split[to_string(split.split)].push_back(model.layers()[i].layer.name);
    for (std::size_t k = 0; k < split.gathered_inputs.size(); ++k) {
      if (split.gathered_inputs[k]) gathered.push_back(model.layers()[i].layer.name);
    }
  }
  std::ostringstream out;
  out << "Tensor split over " << plan.config.tensor << " GPUs:\n";
  for (const auto& [split, names] : by_split) {
    out << "  " << split << " (" << names.size() << "): ";
    for (std::size_t k = 0; k < names.size(); ++k) {
      if (k == 6) {
        out << ", ...";
        break;
      }
      out << (k == 0 ? "" : ", ") << names[k];
    }
    out << "\n";
  }
  if (!gathered.empty()) {
    out << "  inputs gathered whole before: " << gathered.size() << " layers (first "
        << gathered.front() << ")\n";
  }
  return out.str();
}

std::string halo_text(const LayerShard& shard, const std::vector<std::int64_t>& grid) {
  std::string text;
  const auto axes = spatial_axis_names(static_cast<int>(grid.size()));
  for (std::size_t axis = 0; axis < shard.input_halo.size(); ++axis) {
    const auto& halo = shard.input_halo[axis];
    if (grid[axis] == 1 || halo.lower + halo.upper == 0) continue;
    text += (text.empty() ? "" : " ") + axes[axis] + ":" + std::to_string(halo.lower) + "+" +
            std::to_string(halo.upper);
  }
  return text.empty() ? "-" : text;
}

std::string options_text(const Scenario& s) {
  if (!s.model.file.empty()) return "file " + s.model.file;
  std::string text;
  for (const auto& [key, value] : s.model.options)
    text += (text.empty() ? "" : ", ") + key + "=" + value;
  return text.empty() ? "default options" : text;
}

// A node's NVLink mesh and the rings an all-reduce inside it runs (nvlink_rings.hpp).
std::string nvlink_text(const NodeSpec& node, std::int64_t gpus_per_node) {
  if (node.gpu_interconnect != GpuInterconnect::nvlink_mesh || gpus_per_node < 2) return "";
  std::vector<int> gpus;
  int linked_pairs = 0;
  for (int gpu = 0; gpu < gpus_per_node; ++gpu) {
    gpus.push_back(gpu);
    for (int peer = gpu + 1; peer < gpus_per_node; ++peer) {
      linked_pairs += node.nvlinks_between(gpu, peer) > 0 ? 1 : 0;
    }
  }
  const auto rings = nvlink_rings(node, gpus).size();
  const int pairs = static_cast<int>(gpus_per_node * (gpus_per_node - 1) / 2);
  std::ostringstream out;
  out << "NVLink mesh: " << linked_pairs << " of " << pairs << " GPU pairs linked"
      << (linked_pairs < pairs ? " (the others over PCIe)" : "") << "; all-reduce inside a node: ";
  if (rings == 0) {
    out << "one ring in GPU order, its unlinked hops over PCIe (no NVLink ring through every "
           "GPU)";
  } else {
    out << counted(static_cast<std::int64_t>(rings), "ring");
  }
  out << "; " << node.gpu_link_bandwidth_bytes_per_second / 1e9 << " GB/s per link";
  return out.str();
}

std::string header(const LoadedScenario& loaded) {
  const auto& s = loaded.scenario;
  const auto& model = loaded.model;
  const auto& c = loaded.cluster;
  std::ostringstream out;
  out << "Scenario  " << s.name << "  (" << s.file << ")\n";
  if (!s.description.empty()) out << "          " << s.description << "\n";
  out << "Model     " << model.name() << " (" << options_text(s)
      << "): " << format_count(parameter_count(model)) << " parameters, " << model.layers().size()
      << " layers, input " << to_string(model.layers().front().output_shape) << ", "
      << to_string(s.model.dtype) << ", optimizer " << to_string(s.model.optimizer) << "\n";
  out << "Platform  " << c.name << ": " << counted(c.nodes, "node") << " x " << c.gpus_per_node
      << " " << c.gpu.model << " (" << format_bytes(c.gpu.memory_bytes) << ")  [" << c.file
      << "]\n";
  if (!c.failed_nodes.empty()) {
    std::string nodes;
    for (const auto node : c.failed_nodes)
      nodes += (nodes.empty() ? "" : ", ") + std::to_string(node);
    out << "          failed nodes: " << nodes << " (jobs run on the "
        << counted(c.nodes - static_cast<std::int64_t>(c.failed_nodes.size()), "node")
        << " that are up)\n";
  }
  for (const auto& group : c.groups) {
    if (const auto text = nvlink_text(group.node, group.gpus_per_node); !text.empty()) {
      out << "          " << (c.groups.size() > 1 ? group.name + " nodes: " : "") << text << "\n";
    }
  }
  const auto& parallelism = s.parallelism;
  if (parallelism.model_degree > 1) {
    out << "Stages    " << parallelism.model_degree << " per worker, "
        << (!parallelism.placement.empty()      ? "placed layer by layer"
            : !parallelism.stage_starts.empty() ? "contiguous, as named"
                                                : "contiguous, balanced by roofline time")
        << "; " << parallelism.micro_batches
        << (parallelism.micro_batches == 1 ? " micro-batch" : " micro-batches")
        << (parallelism.micro_batches > 1 ? ", schedule " + to_string(parallelism.schedule)
                                          : std::string())
        << "\n";
  }
  if (parallelism.tensor > 1) {
    out << "Tensor    " << parallelism.tensor
        << " GPUs split each layer (Megatron's column and row splits, heads, vocabulary)\n";
  }
  out << "Kernels   micro-batching " << to_string(s.micro_batching.policy) << ", "
      << to_string(s.micro_batching.mode) << ", workspace limit "
      << format_bytes(s.micro_batching.workspace_limit_bytes) << "\n";
  out << "Memory    device capacity " << format_bytes(loaded.device_capacity_bytes) << ", offload "
      << to_string(s.memory.offload) << "\n";
  out << "Input     " << to_string(s.io.format);
  if (s.io.format == DatasetFormat::synthetic) {
    out << ": samples generated where they are used, no reads\n";
  } else {
    out << (s.io.dataset.empty() ? std::string() : " from " + s.io.dataset)
        << (s.io.read_sub_volume ? ", each GPU reads its sub-volume" : ", whole samples")
        << (s.io.prefetch ? ", prefetched" : "") << ", volumes stored as "
        << to_string(s.io.stored_dtype) << "; store " << to_string(s.io.store);
    if (!loaded.points.empty()) {
      const auto& largest = loaded.points.back().config;
      out << "; at " << counted(largest.gpus(), "GPU") << ": "
          << plan_input(loaded, largest.gpus()).description();
    }
    out << "\n";
  }
  out << "Training  time to train from "
      << describe_statistical_efficiency(loaded.statistical_efficiency) << "\n";
  if (s.sweep) {
    out << "Sweep     " << to_string(s.sweep->scaling) << " scaling, growing "
        << to_string(s.sweep->grow) << ", " << loaded.points.size() << " points\n";
  }
  return out.str();
}

std::string layer_table(const LoadedScenario& loaded, const SweepPoint& point) {
  const auto& model = loaded.model;
  const auto& plan = point.plan;
  const auto dtype = loaded.scenario.model.dtype;
  TextTable table({"#", "layer", "op", "output/sample", "local output", "halo", "stage",
                   "fwd FLOP/sample", "bwd FLOP/sample", "params", "act/sample", "kept on GPU"},
                  {Align::right, Align::left, Align::left, Align::left, Align::left, Align::left});
  double total_forward = 0, total_backward = 0;
  for (std::size_t i = 0; i < model.layers().size(); ++i) {
    const auto& layer = model.layers()[i];
    const auto& shard = plan.layers[i];
    const auto cost = layer_cost(layer, 1, dtype);
    const double backward = cost.flops.backward_data + cost.flops.backward_filter;
    total_forward += cost.flops.forward;
    total_backward += backward;
    table.add_row(
        {std::to_string(i), layer.layer.name, to_string(layer.layer.kind),
         to_string(layer.output_shape),
         (shard.spatially_split ? "" : "(unsplit) ") + to_string(shard.local_output, true),
         halo_text(shard, point.config.spatial_grid), std::to_string(shard.stage),
         format_flops(cost.flops.forward), format_flops(backward), format_count(cost.parameters),
         format_bytes(static_cast<double>(cost.output_bytes)),
         format_bytes(kept_activation_bytes(model, plan, i, dtype))});
  }
  std::ostringstream out;
  out << "\nLayers at point " << point.index << " (" << point.config.gpus() << " GPUs: data "
      << point.config.data << " x spatial " << grid_to_string(point.config.spatial_grid)
      << " x model " << point.config.model_degree << " x tensor " << point.config.tensor
      << "; local output = the busiest GPU's shard "
      << "N x C x (D x) H x W; halo = planes from the lower+upper neighbour per split axis)\n";
  out << table.render();
  out << "Per sample: forward " << format_flops(total_forward) << ", backward "
      << format_flops(total_backward) << "\n";
  if (point.config.tensor > 1) out << tensor_split_text(model, plan);
  return out.str();
}

std::string memory_table(const LoadedScenario& loaded) {
  TextTable table({"point", "GPUs", "data", "spatial", "model", "tensor", "mini-batch", "global",
                   "weights+grads+opt", "activations", "act. gradients", "workspace", "input",
                   "peak/GPU", "capacity", "fits"});
  for (const auto& point : loaded.points) {
    const auto m = estimate_memory(loaded.model, point.plan,
                                   memory_inputs_of(loaded.scenario, loaded.device_capacity_bytes));
    const double parameters = m.weights_bytes + m.weight_gradients_bytes + m.optimizer_state_bytes;
    std::string fits = m.fits ? "yes" : "NO";
    if (loaded.scenario.memory.offload != OffloadPolicy::none) {
      fits += " (offload " + to_string(m.offload.policy) +
              (m.offload.memory_optimal_algorithms ? ", no workspace" : "") + ")";
    }
    table.add_row({std::to_string(point.index), std::to_string(point.config.gpus()),
                   std::to_string(point.config.data), grid_to_string(point.config.spatial_grid),
                   std::to_string(point.config.model_degree), std::to_string(point.config.tensor),
                   std::to_string(point.config.mini_batch),
                   std::to_string(point.config.global_batch()), format_bytes(parameters),
                   format_bytes(m.activations_bytes), format_bytes(m.activation_gradients_bytes),
                   format_bytes(m.workspace_bytes), format_bytes(m.input_buffers_bytes),
                   format_bytes(m.total_bytes), format_bytes(m.capacity_bytes), fits});
  }
  return "\nMemory per GPU (the busiest GPU's peak and what it holds then; layer-by-layer "
         "allocation, see memory_plan.hpp)\n" +
         table.render();
}

// Steps and epochs to the target per point: a property of the global batch, known before any
// run; `tessera run` multiplies the steps by each point's step time.
std::string time_to_train_table(const LoadedScenario& loaded) {
  const auto& efficiency = loaded.statistical_efficiency;
  if (efficiency.target == TrainingTarget::none) return {};
  TextTable table({"point", "GPUs", "global batch", "steps to target", "epochs", "from"});
  for (const auto& point : loaded.points) {
    const auto target = steps_to_target(efficiency, point.config.global_batch());
    char steps[32], epochs[32];
    std::snprintf(steps, sizeof steps, "%.0f", target.steps);
    std::snprintf(epochs, sizeof epochs, "%.2f", target.epochs);
    table.add_row(
        {std::to_string(point.index), std::to_string(point.config.gpus()),
         std::to_string(point.config.global_batch()), steps, epochs,
         target.extrapolated ? "extrapolated beyond the table" : to_string(efficiency.target)});
  }
  return "\nSteps to the target (tessera run turns them into time to train: the staging, the "
         "first epoch's steps at its step time, the rest at the steady state's)\n" +
         table.render();
}

}  // namespace

std::string describe_scenario(const LoadedScenario& loaded, const DescribeOptions& options) {
  std::string text = header(loaded);
  if (options.layers) {
    const std::size_t index = std::min(options.point, loaded.points.size() - 1);
    text += layer_table(loaded, loaded.points[index]);
    const ComputeCostModel costs(roofline_of(loaded.cluster.gpu), options.profiles,
                                 loaded.scenario.micro_batching);
    text += micro_batching_table(
        plan_network(loaded.model, loaded.points[index].plan, costs, loaded.scenario.model.dtype));
  }
  text += memory_table(loaded);
  const std::size_t index = std::min(options.point, loaded.points.size() - 1);
  if (shows_offloading(loaded))
    text += offload_table(loaded, loaded.points[index], options.profiles);
  return text + time_to_train_table(loaded);
}

}  // namespace tessera

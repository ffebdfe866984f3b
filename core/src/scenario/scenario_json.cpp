#include "tessera/core/scenario/scenario_json.hpp"

namespace tessera {
namespace {

template <typename T>
nlohmann::json optional_value(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json();
}

}  // namespace

nlohmann::json to_json(const Scenario& s) {
  const auto& m = s.model;
  const auto& p = s.parallelism;
  const auto& io = s.io;
  const auto& platform = s.platform;
  nlohmann::json json = {
      {"name", s.name},
      {"description", s.description},
      {"model",
       {{"zoo", m.zoo_name},
        {"options", m.options},
        {"file", m.file},
        {"mini_batch", optional_value(m.mini_batch)},
        {"dtype", to_string(m.dtype)},
        {"optimizer", to_string(m.optimizer)}}},
      {"parallelism",
       {{"data", p.data},
        {"spatial_grid", p.spatial_grid},
        {"spatial_until", p.spatial_until},
        {"model_degree", p.model_degree},
        {"stage_starts", p.stage_starts},
        {"placement", p.placement},
        {"micro_batches", p.micro_batches},
        {"schedule", to_string(p.schedule)},
        {"tensor", p.tensor},
        {"gpus", optional_value(p.gpus)},
        {"batch_norm_statistics", to_string(p.batch_norm_statistics)},
        {"data_split", to_string(p.data_split)}}},
      {"micro_batching",
       {{"policy", to_string(s.micro_batching.policy)},
        {"mode", to_string(s.micro_batching.mode)},
        {"workspace_limit_bytes", s.micro_batching.workspace_limit_bytes}}},
      {"memory",
       {{"device_capacity_bytes", optional_value(s.memory.device_capacity_bytes)},
        {"offload", to_string(s.memory.offload)},
        {"allocation", to_string(s.memory.allocation)},
        {"shard", to_string(s.memory.shard)},
        {"recompute", to_string(s.memory.recompute)}}},
      {"io",
       {{"format", to_string(io.format)},
        {"dataset", io.dataset},
        {"read_sub_volume", io.read_sub_volume},
        {"prefetch", io.prefetch},
        {"stored_dtype", to_string(io.stored_dtype)},
        {"store", to_string(io.store)},
        {"samples", optional_value(io.samples)},
        {"validation_samples", io.validation_samples}}},
      {"platform",
       {{"preset", platform.preset},
        {"cluster_file", platform.cluster_file},
        {"nodes", optional_value(platform.nodes)},
        {"simgrid_xml", platform.simgrid_xml},
        {"simgrid_gpu_hosts", platform.simgrid_gpu_hosts},
        {"simgrid_gpus_per_node", platform.simgrid_gpus_per_node}}},
      {"outputs", {{"directory", s.outputs.directory}, {"trace_gpus", s.outputs.trace_gpus}}},
      {"sim",
       {{"network_model", s.sim.network_model},
        {"allreduce", to_string(s.sim.allreduce)},
        {"gradient_bucket_bytes", s.sim.gradient_bucket_bytes},
        {"mode", s.sim.mode}}},
      {"real",
       {{"warmup_steps", s.real.warmup_steps},
        {"measured_steps", s.real.measured_steps},
        {"deterministic", s.real.deterministic}}}};
  // Only where given: scenarios without it keep the digests their earlier results were kept by.
  if (m.learning_rate) json["model"]["learning_rate"] = *m.learning_rate;
  if (s.training) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& row : s.training->steps_to_target) {
      rows.push_back({{"global_batch", row.global_batch},
                      {"steps", optional_value(row.steps)},
                      {"epochs", optional_value(row.epochs)}});
    }
    json["training"] = {{"target", to_string(s.training->target)},
                        {"source", s.training->source},
                        {"steps_to_target", rows},
                        {"critical_batch", optional_value(s.training->critical_batch)},
                        {"min_steps", optional_value(s.training->min_steps)},
                        {"min_epochs", optional_value(s.training->min_epochs)}};
  } else {
    json["training"] = nullptr;
  }
  if (s.sweep) {
    json["sweep"] = {{"scaling", to_string(s.sweep->scaling)},
                     {"grow", to_string(s.sweep->grow)},
                     {"gpus", s.sweep->gpus}};
  } else {
    json["sweep"] = nullptr;
  }
  return json;
}

}  // namespace tessera

#pragma once
// The one result schema both backends write and analysis/ reads: a CSV row per sweep point, and a
// JSON document per run with the same fields plus run metadata. Times are in seconds, memory in
// bytes, rates in samples per second. Documented in analysis/RESULT_SCHEMA.md.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/core/common/layer_compute_time.hpp"
#include "tessera/core/common/provenance.hpp"

namespace tessera {

enum class PointStatus { ok, does_not_fit, skipped, failed };
std::string to_string(PointStatus status);
PointStatus point_status_from_string(const std::string& text);

// Exposed (not overlapped) time per category; they add up to the step time.
struct StepBreakdown {
  double compute_seconds = 0;
  double halo_seconds = 0;
  double allreduce_seconds = 0;
  double other_communication_seconds = 0;
  double io_seconds = 0;
  double offload_seconds = 0;
  double idle_seconds = 0;
  double total() const;
  bool operator==(const StepBreakdown&) const = default;
};

struct PointResult {
  std::string scenario;
  std::int64_t point = 0;
  std::string backend;  // "sim" or "real"
  std::int64_t gpus = 0;
  std::int64_t data = 1;
  std::string spatial_grid = "1";  // e.g. "4x1x1"
  std::int64_t model_degree = 1;
  std::int64_t tensor_degree = 1;  // GPUs of a tensor group (parallelism.tensor)
  std::int64_t mini_batch = 1;     // per data-parallel replica
  std::int64_t global_batch = 1;
  PointStatus status = PointStatus::ok;
  double step_seconds = 0;  // a step in steady state: the epochs after the first
  double samples_per_second = 0;
  // A step of the first epoch, which reads every sample from the file system where later epochs
  // read a data store (input_source.hpp); equals step_seconds where the epochs read alike.
  double first_epoch_step_seconds = 0;
  // The staging phase before the first step (io.store: node_local): each node copying its share
  // of the data set to its local storage; 0 where nothing is staged or it was not timed.
  double staging_seconds = 0;
  std::string input_source = "none";  // where steady-state steps read their samples
  StepBreakdown breakdown;
  double peak_memory_bytes = 0;     // per GPU, the busiest one
  double average_memory_bytes = 0;  // its time average over the step
  double offloaded_bytes = 0;       // copied to host memory and back per step, each way (vDNN)
  double device_capacity_bytes = 0;
  bool fits = true;
  // To the target quality (time_to_train.hpp), 0 where the scenario has no training target:
  // epochs and steps at this point's global batch, and the time those steps take at this point's
  // step time (0 for points that did not run).
  double epochs = 0;
  double steps_to_target = 0;
  double time_to_train_seconds = 0;
  Provenance time_provenance = Provenance::none;
  Provenance compute_provenance = Provenance::none;
  Provenance memory_provenance = Provenance::none;
  std::string note;  // why a point was skipped or failed, the network model used, ...
  // The conv kernels' micro-batching plan (to_json of network_micro_batch_plan.hpp): totals,
  // speed-up and every kernel's micro-batches. JSON only (the CSV keeps its columns); null when
  // not recorded.
  nlohmann::json micro_batching;
  // Per layer and pass, in the model's order (forward, backward, then the update). JSON only;
  // empty when not recorded.
  std::vector<LayerComputeTime> layer_compute;
  // The digests of what determined the point (run_inputs.hpp). JSON only; null when not recorded.
  nlohmann::json inputs;

  bool operator==(const PointResult&) const = default;
};

struct RunResult {
  std::string scenario;
  std::string scenario_file;
  std::string backend;
  std::string tessera_version;
  std::string created_utc;  // ISO 8601
  std::string platform;
  std::string model;
  nlohmann::json settings;  // backend settings that shaped the numbers (network model, ...)
  nlohmann::json resolved_scenario;  // every key after defaults (scenario_json.hpp); may be null
  // Where epochs and steps to the target come from (time_to_train.hpp); null without a target.
  nlohmann::json statistical_efficiency;
  std::vector<PointResult> points;
};

const std::vector<std::string>& results_csv_columns();
std::string results_to_csv(const std::vector<PointResult>& points);
// Its lines one by one, each with its newline: the header, then one per point.
std::string results_csv_header_line();
std::string results_csv_line(const PointResult& point);
// Throws std::runtime_error naming the file and line on malformed input. Blank lines are skipped.
// Columns are found by name; files written before the time-to-train or tensor-degree columns
// existed read with those fields 0 (the tensor degree 1).
std::vector<PointResult> results_from_csv(const std::string& text, const std::string& file_name);

nlohmann::json to_json(const PointResult& point);
// The inverse of the above; throws std::invalid_argument naming the key on a malformed entry.
PointResult point_result_from_json(const nlohmann::json& entry);
nlohmann::json to_json(const std::vector<LayerComputeTime>& times);
// The inverse of the above; throws std::invalid_argument on a malformed list.
std::vector<LayerComputeTime> layer_compute_from_json(const nlohmann::json& times);
// Sets the JSON-only fields (micro_batching, layer_compute) of each row from the run document's
// point of the same index, as read back from CSV; a point whose fields are missing or malformed
// keeps its own.
void attach_json_only_fields(std::vector<PointResult>& rows, const nlohmann::json& run_document);
nlohmann::json to_json(const RunResult& run);
// The same with its points left out (the files of result_files.hpp add them one by one).
nlohmann::json run_header_json(const RunResult& run);

}  // namespace tessera

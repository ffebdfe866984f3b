#include "tessera/core/result/result_schema.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <stdexcept>
#include <utility>

#include "csv_records.hpp"
#include "tessera/core/result/csv_field.hpp"

namespace tessera {
namespace {

const std::array<std::pair<PointStatus, const char*>, 4> kStatusNames{{
    {PointStatus::ok, "ok"},
    {PointStatus::does_not_fit, "does_not_fit"},
    {PointStatus::skipped, "skipped"},
    {PointStatus::failed, "failed"},
}};

// Shortest text that reads back to the same double.
std::string number(double value) {
  char buffer[64];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value);
  (void)error;
  return std::string(buffer, end);
}

std::vector<std::string> row_of(const PointResult& p) {
  const auto& b = p.breakdown;
  return {p.scenario,
          std::to_string(p.point),
          p.backend,
          std::to_string(p.gpus),
          std::to_string(p.data),
          p.spatial_grid,
          std::to_string(p.model_degree),
          std::to_string(p.tensor_degree),
          std::to_string(p.mini_batch),
          std::to_string(p.global_batch),
          to_string(p.status),
          number(p.step_seconds),
          number(p.samples_per_second),
          number(p.first_epoch_step_seconds),
          number(p.staging_seconds),
          p.input_source,
          number(b.compute_seconds),
          number(b.halo_seconds),
          number(b.allreduce_seconds),
          number(b.other_communication_seconds),
          number(b.io_seconds),
          number(b.offload_seconds),
          number(b.idle_seconds),
          number(p.peak_memory_bytes),
          number(p.average_memory_bytes),
          number(p.offloaded_bytes),
          number(p.device_capacity_bytes),
          p.fits ? "true" : "false",
          to_string(p.time_provenance),
          to_string(p.compute_provenance),
          to_string(p.memory_provenance),
          number(p.epochs),
          number(p.steps_to_target),
          number(p.time_to_train_seconds),
          p.note};
}

std::int64_t to_integer(const std::string& text, const std::string& where) {
  std::int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    throw std::runtime_error(where + ": expected an integer, got '" + text + "'");
  }
  return value;
}

double to_number(const std::string& text, const std::string& where) {
  double value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    throw std::runtime_error(where + ": expected a number, got '" + text + "'");
  }
  return value;
}

}  // namespace

double StepBreakdown::total() const {
  return compute_seconds + halo_seconds + allreduce_seconds + other_communication_seconds +
         io_seconds + offload_seconds + idle_seconds;
}

std::string to_string(PointStatus status) {
  for (const auto& [value, name] : kStatusNames) {
    if (value == status) return name;
  }
  return "failed";
}

PointStatus point_status_from_string(const std::string& text) {
  for (const auto& [value, name] : kStatusNames) {
    if (text == name) return value;
  }
  throw std::invalid_argument("unknown point status '" + text + "'");
}

const std::vector<std::string>& results_csv_columns() {
  static const std::vector<std::string> columns{"scenario",
                                                "point",
                                                "backend",
                                                "gpus",
                                                "data",
                                                "spatial_grid",
                                                "model_degree",
                                                "tensor_degree",
                                                "mini_batch",
                                                "global_batch",
                                                "status",
                                                "step_s",
                                                "samples_per_s",
                                                "first_epoch_step_s",
                                                "staging_s",
                                                "input_source",
                                                "compute_s",
                                                "halo_s",
                                                "allreduce_s",
                                                "other_comm_s",
                                                "io_s",
                                                "offload_s",
                                                "idle_s",
                                                "peak_memory_bytes",
                                                "average_memory_bytes",
                                                "offloaded_bytes",
                                                "device_capacity_bytes",
                                                "fits",
                                                "time_provenance",
                                                "compute_provenance",
                                                "memory_provenance",
                                                "epochs",
                                                "steps_to_target",
                                                "time_to_train_s",
                                                "note"};
  return columns;
}

namespace {

// Columns added after the first files were written, in groups a file has whole or not at all:
// time to train, the tensor degree and the staging phase (2026-11). Files without them still
// read, with those fields 0 (the tensor degree 1).
const std::vector<std::vector<std::string>>& added_later() {
  static const std::vector<std::vector<std::string>> groups{
      {"tensor_degree"}, {"epochs", "steps_to_target", "time_to_train_s"}, {"staging_s"}};
  return groups;
}

bool added_later(const std::string& column) {
  for (const auto& group : added_later()) {
    if (std::find(group.begin(), group.end(), column) != group.end()) return true;
  }
  return false;
}

// Where each column sits in a file's header; throws where the header is not a results file's.
std::map<std::string, std::size_t> column_positions(const std::vector<std::string>& header,
                                                    const std::string& file) {
  std::map<std::string, std::size_t> positions;
  for (std::size_t i = 0; i < header.size(); ++i) positions.emplace(header[i], i);
  const auto& known = results_csv_columns();
  bool valid = positions.size() == header.size();
  for (const auto& column : header) {
    valid = valid && std::find(known.begin(), known.end(), column) != known.end();
  }
  for (const auto& column : known)
    valid = valid && (positions.count(column) || added_later(column));
  for (const auto& group : added_later()) {
    const auto present = std::count_if(group.begin(), group.end(),
                                       [&](const auto& column) { return positions.count(column); });
    valid = valid && (present == 0 || present == static_cast<std::ptrdiff_t>(group.size()));
  }
  if (!valid) throw std::runtime_error(file + ":1: not a Tessera results file (unexpected header)");
  return positions;
}

}  // namespace

std::string results_csv_header_line() {
  std::string line;
  for (const auto& column : results_csv_columns()) line += (line.empty() ? "" : ",") + column;
  return line + "\n";
}

std::string results_csv_line(const PointResult& point) {
  std::string line;
  bool first = true;
  for (const auto& field : row_of(point)) {
    line += (first ? "" : ",") + csv_field(field);
    first = false;
  }
  return line + "\n";
}

std::string results_to_csv(const std::vector<PointResult>& points) {
  auto text = results_csv_header_line();
  for (const auto& point : points) text += results_csv_line(point);
  return text;
}

std::vector<PointResult> results_from_csv(const std::string& text, const std::string& file) {
  const auto records = parse_csv(text, file);
  if (records.empty()) throw std::runtime_error(file + ":1: not a Tessera results file (empty)");
  const auto positions = column_positions(records.front().fields, file);
  const std::size_t columns = records.front().fields.size();
  std::vector<PointResult> points;
  for (std::size_t r = 1; r < records.size(); ++r) {
    const auto& f = records[r].fields;
    const std::string where = file + ":" + std::to_string(records[r].line);
    if (f.size() != columns) {
      throw std::runtime_error(where + ": expected " + std::to_string(columns) + " fields, got " +
                               std::to_string(f.size()));
    }
    auto field = [&](const std::string& column) -> const std::string& {
      return f[positions.at(column)];
    };
    auto optional_number = [&](const std::string& column, double absent) {
      return positions.count(column) ? to_number(field(column), where) : absent;
    };
    try {
      PointResult p;
      p.scenario = field("scenario");
      p.point = to_integer(field("point"), where);
      p.backend = field("backend");
      p.gpus = to_integer(field("gpus"), where);
      p.data = to_integer(field("data"), where);
      p.spatial_grid = field("spatial_grid");
      p.model_degree = to_integer(field("model_degree"), where);
      p.tensor_degree =
          positions.count("tensor_degree") ? to_integer(field("tensor_degree"), where) : 1;
      p.mini_batch = to_integer(field("mini_batch"), where);
      p.global_batch = to_integer(field("global_batch"), where);
      p.status = point_status_from_string(field("status"));
      p.step_seconds = to_number(field("step_s"), where);
      p.samples_per_second = to_number(field("samples_per_s"), where);
      p.first_epoch_step_seconds = to_number(field("first_epoch_step_s"), where);
      p.staging_seconds = optional_number("staging_s", 0);  // none before the staging phase
      p.input_source = field("input_source");
      auto& b = p.breakdown;
      const std::pair<const char*, double*> numbers[] = {
          {"compute_s", &b.compute_seconds},
          {"halo_s", &b.halo_seconds},
          {"allreduce_s", &b.allreduce_seconds},
          {"other_comm_s", &b.other_communication_seconds},
          {"io_s", &b.io_seconds},
          {"offload_s", &b.offload_seconds},
          {"idle_s", &b.idle_seconds},
          {"peak_memory_bytes", &p.peak_memory_bytes},
          {"average_memory_bytes", &p.average_memory_bytes},
          {"offloaded_bytes", &p.offloaded_bytes},
          {"device_capacity_bytes", &p.device_capacity_bytes}};
      for (const auto& [column, value] : numbers) *value = to_number(field(column), where);
      const auto& fits = field("fits");
      if (fits != "true" && fits != "false") {
        throw std::invalid_argument("fits: expected true or false, got '" + fits + "'");
      }
      p.fits = fits == "true";
      p.time_provenance = provenance_from_string(field("time_provenance"));
      p.compute_provenance = provenance_from_string(field("compute_provenance"));
      p.memory_provenance = provenance_from_string(field("memory_provenance"));
      p.epochs = optional_number("epochs", 0);
      p.steps_to_target = optional_number("steps_to_target", 0);
      p.time_to_train_seconds = optional_number("time_to_train_s", 0);
      p.note = field("note");
      points.push_back(std::move(p));
    } catch (const std::invalid_argument& error) {
      throw std::runtime_error(where + ": " + error.what());
    }
  }
  return points;
}

nlohmann::json to_json(const PointResult& p) {
  const auto& b = p.breakdown;
  nlohmann::json json = {{"scenario", p.scenario},
                         {"point", p.point},
                         {"backend", p.backend},
                         {"gpus", p.gpus},
                         {"parallelism",
                          {{"data", p.data},
                           {"spatial_grid", p.spatial_grid},
                           {"model_degree", p.model_degree},
                           {"tensor_degree", p.tensor_degree}}},
                         {"mini_batch", p.mini_batch},
                         {"global_batch", p.global_batch},
                         {"status", to_string(p.status)},
                         {"step_s", p.step_seconds},
                         {"samples_per_s", p.samples_per_second},
                         {"first_epoch_step_s", p.first_epoch_step_seconds},
                         {"staging_s", p.staging_seconds},
                         {"input_source", p.input_source},
                         {"breakdown_s",
                          {{"compute", b.compute_seconds},
                           {"halo", b.halo_seconds},
                           {"allreduce", b.allreduce_seconds},
                           {"other_comm", b.other_communication_seconds},
                           {"io", b.io_seconds},
                           {"offload", b.offload_seconds},
                           {"idle", b.idle_seconds}}},
                         {"peak_memory_bytes", p.peak_memory_bytes},
                         {"average_memory_bytes", p.average_memory_bytes},
                         {"offloaded_bytes", p.offloaded_bytes},
                         {"device_capacity_bytes", p.device_capacity_bytes},
                         {"fits", p.fits},
                         {"provenance",
                          {{"step_s", to_string(p.time_provenance)},
                           {"breakdown_s", to_string(p.time_provenance)},
                           {"compute", to_string(p.compute_provenance)},
                           {"peak_memory_bytes", to_string(p.memory_provenance)}}},
                         {"epochs", p.epochs},
                         {"steps_to_target", p.steps_to_target},
                         {"time_to_train_s", p.time_to_train_seconds},
                         {"note", p.note}};
  if (!p.micro_batching.is_null()) json["micro_batching"] = p.micro_batching;
  if (!p.layer_compute.empty()) json["layer_compute_s"] = to_json(p.layer_compute);
  if (!p.inputs.is_null()) json["inputs"] = p.inputs;
  return json;
}

PointResult point_result_from_json(const nlohmann::json& entry) {
  if (!entry.is_object()) throw std::invalid_argument("expected an object, got " + entry.dump());
  auto at = [](const nlohmann::json& object, const char* key) -> const nlohmann::json& {
    if (!object.is_object() || !object.contains(key)) {
      throw std::invalid_argument(std::string(key) + ": missing");
    }
    return object[key];
  };
  auto text = [&](const nlohmann::json& object, const char* key) {
    const auto& value = at(object, key);
    if (!value.is_string()) throw std::invalid_argument(std::string(key) + ": expected text");
    return value.get<std::string>();
  };
  auto integer = [&](const nlohmann::json& object, const char* key) {
    const auto& value = at(object, key);
    if (!value.is_number_integer()) {
      throw std::invalid_argument(std::string(key) + ": expected an integer");
    }
    return value.get<std::int64_t>();
  };
  auto number = [&](const nlohmann::json& object, const char* key) {
    const auto& value = at(object, key);
    if (!value.is_number()) throw std::invalid_argument(std::string(key) + ": expected a number");
    return value.get<double>();
  };
  PointResult p;
  p.scenario = text(entry, "scenario");
  p.point = integer(entry, "point");
  p.backend = text(entry, "backend");
  p.gpus = integer(entry, "gpus");
  const auto& parallelism = at(entry, "parallelism");
  p.data = integer(parallelism, "data");
  p.spatial_grid = text(parallelism, "spatial_grid");
  p.model_degree = integer(parallelism, "model_degree");
  // Run documents written before tensor parallelism have no tensor degree: 1.
  p.tensor_degree =
      parallelism.contains("tensor_degree") ? integer(parallelism, "tensor_degree") : 1;
  p.mini_batch = integer(entry, "mini_batch");
  p.global_batch = integer(entry, "global_batch");
  p.status = point_status_from_string(text(entry, "status"));
  p.step_seconds = number(entry, "step_s");
  p.samples_per_second = number(entry, "samples_per_s");
  p.first_epoch_step_seconds = number(entry, "first_epoch_step_s");
  // Run documents written before the staging phase have none.
  p.staging_seconds = entry.contains("staging_s") ? number(entry, "staging_s") : 0;
  p.input_source = text(entry, "input_source");
  const auto& breakdown = at(entry, "breakdown_s");
  auto& b = p.breakdown;
  b.compute_seconds = number(breakdown, "compute");
  b.halo_seconds = number(breakdown, "halo");
  b.allreduce_seconds = number(breakdown, "allreduce");
  b.other_communication_seconds = number(breakdown, "other_comm");
  b.io_seconds = number(breakdown, "io");
  b.offload_seconds = number(breakdown, "offload");
  b.idle_seconds = number(breakdown, "idle");
  p.peak_memory_bytes = number(entry, "peak_memory_bytes");
  // Records written before these fields existed read as 0.
  p.average_memory_bytes = entry.value("average_memory_bytes", 0.0);
  p.offloaded_bytes = entry.value("offloaded_bytes", 0.0);
  p.device_capacity_bytes = number(entry, "device_capacity_bytes");
  const auto& fits = at(entry, "fits");
  if (!fits.is_boolean()) throw std::invalid_argument("fits: expected true or false");
  p.fits = fits.get<bool>();
  const auto& provenance = at(entry, "provenance");
  p.time_provenance = provenance_from_string(text(provenance, "step_s"));
  p.compute_provenance = provenance_from_string(text(provenance, "compute"));
  p.memory_provenance = provenance_from_string(text(provenance, "peak_memory_bytes"));
  p.note = text(entry, "note");
  // Absent from documents written before time to train existed: 0, as for no target.
  for (const auto& [key, field] :
       {std::pair{"epochs", &p.epochs}, std::pair{"steps_to_target", &p.steps_to_target},
        std::pair{"time_to_train_s", &p.time_to_train_seconds}}) {
    if (entry.contains(key)) *field = number(entry, key);
  }
  if (entry.contains("micro_batching")) p.micro_batching = entry["micro_batching"];
  if (entry.contains("layer_compute_s")) {
    p.layer_compute = layer_compute_from_json(entry["layer_compute_s"]);
  }
  if (entry.contains("inputs")) p.inputs = entry["inputs"];
  return p;
}

nlohmann::json to_json(const std::vector<LayerComputeTime>& times) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& time : times) {
    list.push_back({{"layer", time.layer}, {"pass", time.pass}, {"seconds", time.seconds}});
  }
  return list;
}

std::vector<LayerComputeTime> layer_compute_from_json(const nlohmann::json& times) {
  if (!times.is_array()) throw std::invalid_argument("layer_compute_s: expected a list");
  std::vector<LayerComputeTime> parsed;
  for (const auto& entry : times) {
    if (!entry.is_object() || !entry.contains("layer") || !entry["layer"].is_string() ||
        !entry.contains("pass") || !entry["pass"].is_string() || !entry.contains("seconds") ||
        !entry["seconds"].is_number()) {
      throw std::invalid_argument(
          "layer_compute_s: expected entries {layer: text, pass: text, seconds: number}, got " +
          entry.dump());
    }
    parsed.push_back({entry["layer"].get<std::string>(), entry["pass"].get<std::string>(),
                      entry["seconds"].get<double>()});
  }
  return parsed;
}

void attach_json_only_fields(std::vector<PointResult>& rows, const nlohmann::json& run_document) {
  if (!run_document.is_object() || !run_document.contains("points") ||
      !run_document["points"].is_array()) {
    return;
  }
  for (const auto& entry : run_document["points"]) {
    if (!entry.is_object() || !entry.contains("point") || !entry["point"].is_number_integer()) {
      continue;
    }
    for (auto& row : rows) {
      if (row.point != entry["point"].get<std::int64_t>()) continue;
      if (entry.contains("micro_batching") && entry["micro_batching"].is_object()) {
        row.micro_batching = entry["micro_batching"];
      }
      if (!entry.contains("layer_compute_s")) continue;
      try {
        row.layer_compute = layer_compute_from_json(entry["layer_compute_s"]);
      } catch (const std::invalid_argument&) {
        // Without them the point is still a result; the per-layer comparison leaves it out.
      }
    }
  }
}

nlohmann::json run_header_json(const RunResult& run) {
  nlohmann::json json = {{"schema", "tessera-run/1"},
                         {"scenario", run.scenario},
                         {"scenario_file", run.scenario_file},
                         {"backend", run.backend},
                         {"tessera_version", run.tessera_version},
                         {"created_utc", run.created_utc},
                         {"platform", run.platform},
                         {"model", run.model},
                         {"settings", run.settings}};
  if (!run.resolved_scenario.is_null()) json["resolved_scenario"] = run.resolved_scenario;
  if (!run.statistical_efficiency.is_null()) {
    json["statistical_efficiency"] = run.statistical_efficiency;
  }
  return json;
}

nlohmann::json to_json(const RunResult& run) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& point : run.points) points.push_back(to_json(point));
  auto json = run_header_json(run);
  json["points"] = std::move(points);
  return json;
}

}  // namespace tessera

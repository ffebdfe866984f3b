#include "tessera/core/result/run_inputs.hpp"

#include <array>
#include <utility>

#include "tessera/core/common/content_digest.hpp"
#include "tessera/core/common/embedded_files.hpp"
#include "tessera/core/model/model_json.hpp"
#include "tessera/core/scenario/scenario_json.hpp"

namespace tessera {
namespace {

constexpr std::string_view kBuiltIn = "built-in:";

const std::array<std::pair<const char*, const char*>, 10> kChangeDescriptions{{
    {"scenario", "scenario changed"},
    {"model", "model changed"},
    {"cluster", "cluster file changed"},
    {"simgrid_xml", "SimGrid platform file changed"},
    {"profiles", "profiles changed"},
    {"dataset", "data set changed"},
    {"settings", "backend settings changed"},
    {"machine", "the machine or its compute threads changed"},
    {"version", "Tessera itself changed"},
    {"inputs", "stored without input digests"},
}};

// The scenario's keys that decide a point's numbers: not its name (a row must match it anyway),
// description or outputs, nor the sweep, whose points are matched one by one by their
// configuration so that a sweep extended by a point keeps the others, nor the training key,
// whose time to train the sweep runner computes again for kept points.
std::string scenario_digest(const Scenario& scenario) {
  auto json = to_json(scenario);
  for (const char* key : {"name", "description", "outputs", "sweep", "training"}) json.erase(key);
  return content_digest(json.dump());
}

std::string cluster_digest(const ClusterSpec& cluster) {
  if (cluster.file.starts_with(kBuiltIn)) {
    const auto text = embedded_file(std::string_view(cluster.file).substr(kBuiltIn.size()));
    return content_digest(text ? *text : cluster.file);
  }
  return file_digest(cluster.file);
}

}  // namespace

nlohmann::json digest_run_inputs(const LoadedScenario& loaded, const RunInputSources& sources) {
  const auto& s = loaded.scenario;
  nlohmann::json digests = {{"scenario", scenario_digest(s)},
                            {"model", content_digest(to_json(loaded.model).dump())},
                            {"cluster", cluster_digest(loaded.cluster)},
                            {"settings", content_digest(sources.settings.dump())},
                            {"version", sources.tessera_version}};
  if (!sources.machine.is_null()) digests["machine"] = content_digest(sources.machine.dump());
  if (!loaded.simgrid_xml_path.empty()) {
    digests["simgrid_xml"] = file_digest(loaded.simgrid_xml_path);
  }
  if (!sources.profile_files.empty()) {
    std::string each;
    for (const auto& file : sources.profile_files) each += file_digest(file);
    digests["profiles"] = content_digest(each);
  }
  // The simulator reads no sample; the real backend reads the data set's files.
  if (sources.backend == "real" && s.io.format == DatasetFormat::hdf5) {
    digests["dataset"] = directory_listing_digest(s.io.dataset);
  }
  return digests;
}

std::vector<std::string> changed_inputs(const nlohmann::json& stored, const nlohmann::json& now) {
  if (!stored.is_object() || stored.empty()) return {"inputs"};
  std::vector<std::string> changed;
  for (const auto& [kind, description] : kChangeDescriptions) {
    (void)description;
    const bool in_stored = stored.contains(kind);
    const bool in_now = now.contains(kind);
    if (in_stored != in_now || (in_now && stored[kind] != now[kind])) changed.emplace_back(kind);
  }
  return changed;
}

std::string describe_input_change(const std::string& kind) {
  for (const auto& [name, description] : kChangeDescriptions) {
    if (kind == name) return description;
  }
  return kind + " changed";
}

}  // namespace tessera

#include "tessera/core/strategy/input_source.hpp"

#include "tessera/core/common/quantity.hpp"

namespace tessera {

std::string to_string(InputSource source) {
  switch (source) {
    case InputSource::none:
      return "none";
    case InputSource::file_system:
      return "file_system";
    case InputSource::peer_memory:
      return "peer_memory";
    case InputSource::node_local_storage:
      return "node_local_storage";
    case InputSource::own_memory:
      return "own_memory";
    case InputSource::page_cache:
      return "page_cache";
  }
  return "none";
}

namespace {

std::string phrase(InputSource source) {
  switch (source) {
    case InputSource::none:
      return "samples generated where they are used, no reads";
    case InputSource::file_system:
      return "samples read from the parallel file system";
    case InputSource::peer_memory:
      return "samples from the data store in the nodes' host memory, most from another node";
    case InputSource::node_local_storage:
      return "samples read from node-local storage";
    case InputSource::own_memory:
      return "samples kept in the rank's own host memory";
    case InputSource::page_cache:
      return "the node's share of the files from its page cache (host memory)";
  }
  return "";
}

}  // namespace

std::string InputPlan::description() const {
  std::string text = epochs_differ()
                         ? "steady state (epochs after the first): " + phrase(later_epochs) +
                               "; the first epoch: " + phrase(first_epoch) + " (first_epoch_step_s)"
                         : phrase(later_epochs);
  if (staged) {
    text += staged_bytes_per_node > 0
                ? "; before the first step each node stages its share of the data set (" +
                      format_bytes(staged_bytes_per_node) +
                      ") from the parallel file system to its local storage (staging_s)"
                : "; before the first step each node stages its share of the data set to its "
                  "local storage (not timed: io.samples not given)";
  }
  if (!note.empty()) text += "; " + note;
  return text;
}

InputPlan plan_input(const IoSection& io, const ClusterSpec& cluster, std::int64_t gpus,
                     double sample_bytes) {
  if (io.format == DatasetFormat::synthetic) return {};
  InputPlan plan{InputSource::file_system, InputSource::file_system, ""};
  if (io.store == DataStore::none) return plan;

  const bool local_storage = io.store == DataStore::node_local;
  const InputSource store = io.store == DataStore::memory       ? InputSource::peer_memory
                            : io.store == DataStore::page_cache ? InputSource::page_cache
                                                                : InputSource::node_local_storage;
  const std::string what = local_storage ? "local storage" : "host memory";
  const double capacity_bytes =
      local_storage ? cluster.node.local_storage_bytes : cluster.node.host_memory_bytes;
  if (capacity_bytes <= 0) {
    plan.note = "io.store: " + to_string(io.store) + ": the cluster's nodes have no " + what +
                " described; every epoch reads the file system";
    return plan;
  }
  // A staged data set is read from its staged copy from the first step on.
  const auto use_store = [&](double staged_bytes) {
    plan.later_epochs = store;
    if (!local_storage) return;
    plan.first_epoch = store;
    plan.staged = true;
    plan.staged_bytes_per_node = staged_bytes;
  };
  if (!io.samples) {
    use_store(0);
    plan.note = "io.samples not given: the data store is assumed to fit the nodes' " + what +
                " (each node's share of the data set)";
    return plan;
  }
  const std::int64_t nodes = (gpus + cluster.gpus_per_node - 1) / cluster.gpus_per_node;
  // Staged, the validation set goes to the nodes with the training set.
  const auto held_samples = *io.samples + (local_storage ? io.validation_samples : 0);
  const double share_bytes =
      static_cast<double>(held_samples) * sample_bytes / static_cast<double>(nodes);
  if (share_bytes > capacity_bytes) {
    plan.note = "io.store: " + to_string(io.store) +
                " does not fit: each node's share of the data set is " + format_bytes(share_bytes) +
                ", its " + what + " " + format_bytes(capacity_bytes) +
                "; every epoch reads the file system";
    return plan;
  }
  use_store(share_bytes);
  return plan;
}

}  // namespace tessera

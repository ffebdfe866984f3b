#pragma once
// Where a GPU's samples come from, epoch by epoch: the one rule both backends follow.
//
// Synthetic samples are generated where they are used and read from nowhere. Samples in files
// (io.format: hdf5) are read from the parallel file system in the first epoch. Later epochs read
// them again from there (io.store: none), from the host memory of the node that read them first
// (io.store: memory, LBANN's data store: with the data set reshuffled every epoch, a step's
// samples lie on nodes drawn at random, sample_holders.hpp), or from node-local storage the data
// set was staged to (io.store: node_local, as MLPerf HPC submissions do: each node keeps its share
// of the data set and shuffles within it; the staging is a phase of its own before the first step,
// which then reads the staged copy too), or from the operating system's page cache (io.store:
// page_cache: nothing is staged, but each rank reads the same fixed shard of the files every epoch,
// as the MLPerf HPC CosmoFlow reference does, so a node's share stays in its host memory after the
// first epoch). A store that cannot hold its share of the data set is not used: every epoch then
// reads the file system, and the plan says why.
#include <cstdint>
#include <string>

#include "tessera/core/scenario/cluster_spec.hpp"
#include "tessera/core/scenario/scenario.hpp"

namespace tessera {

// own_memory: the rank's own host memory, where the real backend keeps the samples it read
// (its store crosses no network and stages to no disk); the simulator plays the others.
// page_cache: the node's own host memory, where the operating system cached the files it read.
enum class InputSource {
  none,
  file_system,
  peer_memory,
  node_local_storage,
  own_memory,
  page_cache
};
enum class Epoch { first, later };
std::string to_string(InputSource source);

struct InputPlan {
  InputSource first_epoch = InputSource::none;
  InputSource later_epochs = InputSource::none;
  std::string note;  // what the plan assumed or why a store is not used; empty when nothing to say
  // Staged (node-local storage): before the first step each node copies its share of the data
  // set, this many bytes, from the parallel file system (0: nothing staged, or the share is not
  // known without io.samples).
  double staged_bytes_per_node = 0;
  bool staged = false;

  bool epochs_differ() const { return first_epoch != later_epochs; }
  InputSource of(Epoch epoch) const { return epoch == Epoch::first ? first_epoch : later_epochs; }
  // For a result's note, e.g. "steady state: samples from the peers' host memory (the data
  // store); the first epoch reads the file system".
  std::string description() const;
};

// `gpus` GPUs of `cluster` train; `sample_bytes` is one whole sample as stored in the files.
InputPlan plan_input(const IoSection& io, const ClusterSpec& cluster, std::int64_t gpus,
                     double sample_bytes);
// For a loaded scenario: point_input.hpp.

}  // namespace tessera

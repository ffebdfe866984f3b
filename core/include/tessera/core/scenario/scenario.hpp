#pragma once
// A scenario file, parsed: what to train (model), how to split it (parallelism), how kernels run,
// memory, input, platform, sweep and outputs, plus each backend's own section. Both backends read
// the same Scenario; nothing here depends on either.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/common/dtype.hpp"
#include "tessera/core/common/input_error.hpp"

namespace tessera {

// The order in which a model-parallel stage runs its micro-batches' passes
// (pipeline_schedule.hpp says what each gives).
enum class PipelineSchedule {
  gpipe,        // every micro-batch's forward, then every backward (the last micro-batch first)
  one_f_one_b,  // a few forwards to fill the pipeline, then one forward, one backward, ...
};
std::string to_string(PipelineSchedule schedule);

enum class Optimizer { sgd, momentum, adam };
enum class MicroBatchPolicy { undivided, power_of_two, all };
enum class MicroBatchMode { per_layer, whole_network };
enum class OffloadPolicy { none, all, conv, dyn };
// How device memory is handed out over a step (memory_plan.hpp): layer by layer from a pool
// (vDNN's), or every tensor for the whole step (the frameworks vDNN compares with).
enum class MemoryAllocation { layer_wise, network_wide };
// What each GPU of a data-parallel group keeps only its share of (ZeRO stages 1-3, Rajbhandari
// et al. 2020; PyTorch FSDP): nothing, the optimizer state, the state and the gradients, or
// those and the weights, gathered layer by layer where they are used.
enum class ShardLevel { none, optimizer, gradients, weights };
// Activation recomputation (Chen et al. 2016; Megatron-LM's full checkpointing): none, or every
// residual block's inner activations dropped after forward and recomputed before its backward
// (recompute_segments.hpp).
enum class RecomputePolicy { none, full };
enum class DatasetFormat { synthetic, hdf5 };
// The element type of the volumes in the data set's files (what a read moves); the host converts
// them to the model's dtype. MLPerf HPC's CosmoFlow samples hold int16 counts.
enum class StoredDType { float32, int16 };
std::int64_t stored_dtype_bytes(StoredDType dtype);
// Where samples come from after the first epoch (see input_source.hpp).
enum class DataStore { none, memory, node_local, page_cache };
enum class Scaling { strong, weak };
enum class GrowAxis { data, spatial_d, spatial_h, spatial_w };
enum class CollectiveAlgorithm { automatic, ring, tree, hierarchical };
// Over which GPUs batch-norm layers with global statistics sum them: the GPUs sharing a
// replica's samples (its spatial group, as the reference 3D-CNN runs do), or every GPU (a
// synchronised batch-norm across the data-parallel replicas too).
enum class BatchNormStatistics { sample_group, global };
// How the global batch is shared between data-parallel replicas: equally (mini_batch each), or
// in proportion to each replica's GPU speed on a heterogeneous cluster, in whole samples (as
// mu-cuDNN shares it between GPU types; data_split.hpp).
enum class DataSplit { equal, proportional };
// How the steps to a target quality depend on the global batch (time_to_train.hpp): a table of
// measurements, McCandlish et al.'s critical-batch form, or no statistical-efficiency model.
enum class TrainingTarget { none, table, critical_batch };

std::string to_string(Optimizer value);
std::string to_string(MicroBatchPolicy value);
std::string to_string(MicroBatchMode value);
std::string to_string(OffloadPolicy value);
std::string to_string(MemoryAllocation value);
std::string to_string(ShardLevel value);
std::string to_string(RecomputePolicy value);
std::string to_string(DatasetFormat value);
std::string to_string(StoredDType value);
std::string to_string(DataStore value);
std::string to_string(Scaling value);
std::string to_string(GrowAxis value);
std::string to_string(CollectiveAlgorithm value);
std::string to_string(BatchNormStatistics value);
std::string to_string(DataSplit value);
std::string to_string(TrainingTarget value);

struct ModelSection {
  std::string zoo_name;                        // set when the model comes from the zoo
  std::map<std::string, std::string> options;  // zoo options as written
  std::string file;                            // set when the model is a YAML model file
  std::optional<std::int64_t> mini_batch;      // per data-parallel replica; zoo default if absent
  DType dtype = DType::float32;
  Optimizer optimizer = Optimizer::adam;
  // The real backend's step size; the optimizer's usual one when absent (sgd and momentum 0.01,
  // adam 0.001). A step's time does not depend on it, so the simulator ignores it.
  std::optional<double> learning_rate;
  SourceLocation where;
};

struct ParallelismSection {
  std::int64_t data = 1;
  std::vector<std::int64_t> spatial_grid;  // one entry per spatial axis; empty = unsplit
  std::string spatial_until;               // first layer that runs unsplit; "" = first dense layer
  std::int64_t model_degree = 1;
  std::vector<std::string> stage_starts;  // first layer of stages 2..degree; "" = balanced
  // An explicit placement (layer -> stage, 0-based); layers not named follow their first input.
  std::vector<std::pair<std::string, std::int64_t>> placement;
  std::int64_t micro_batches = 1;  // the mini-batch split to flow through the stages
  PipelineSchedule schedule = PipelineSchedule::gpipe;
  std::int64_t tensor = 1;           // GPUs splitting each layer's weights (tensor_split.hpp)
  std::optional<std::int64_t> gpus;  // if given, must equal data x spatial x model x tensor
  BatchNormStatistics batch_norm_statistics = BatchNormStatistics::sample_group;
  DataSplit data_split = DataSplit::equal;
};

struct MicroBatchingSection {
  MicroBatchPolicy policy = MicroBatchPolicy::undivided;
  MicroBatchMode mode = MicroBatchMode::per_layer;
  double workspace_limit_bytes = 64.0 * 1024 * 1024;  // per kernel, or whole network
};

struct MemorySection {
  std::optional<double> device_capacity_bytes;  // default: the platform GPU's memory
  OffloadPolicy offload = OffloadPolicy::none;
  MemoryAllocation allocation = MemoryAllocation::layer_wise;
  ShardLevel shard = ShardLevel::none;
  RecomputePolicy recompute = RecomputePolicy::none;
};

struct IoSection {
  DatasetFormat format = DatasetFormat::synthetic;
  std::string dataset;          // directory of HDF5 samples (format hdf5; the real backend's)
  bool read_sub_volume = true;  // each GPU reads only its shard of a sample
  bool prefetch = true;         // the next sample is read while the step computes
  StoredDType stored_dtype = StoredDType::float32;
  DataStore store = DataStore::none;
  std::optional<std::int64_t> samples;  // samples in the data set, if known
  // Samples of its validation set, staged with it (io.store: node_local); none: not counted.
  std::int64_t validation_samples = 0;
};

struct PlatformSection {
  std::string preset;                 // a built-in cluster (scenarios/clusters/<preset>.yaml)
  std::string cluster_file;           // or a cluster file, relative to the scenario file
  std::optional<std::int64_t> nodes;  // use this many nodes of the cluster
  // A user's own SimGrid platform (simulator only): the network comes from the XML file, the GPU
  // figures from the preset or cluster file. GPU rank i runs on host simgrid_gpu_hosts with "{i}"
  // replaced by i; ranks [k*g, (k+1)*g) count as node k for hierarchical collectives.
  std::string simgrid_xml;
  std::string simgrid_gpu_hosts;
  std::int64_t simgrid_gpus_per_node = 1;
};

struct SweepSection {
  Scaling scaling = Scaling::strong;
  GrowAxis grow = GrowAxis::data;
  std::vector<std::int64_t> gpus;
  std::vector<SourceLocation> gpus_where;  // location of each value, for errors
};

struct OutputsSection {
  std::string directory;  // relative to the working directory; default results/<scenario name>
  std::vector<std::int64_t> trace_gpus{0};
};

struct SimSection {
  std::string network_model = "CM02";
  CollectiveAlgorithm allreduce = CollectiveAlgorithm::automatic;
  double gradient_bucket_bytes = 25.0 * 1024 * 1024;
  // "symmetric": on a homogeneous cluster, play a few data-parallel replicas standing for the
  // others (validated against "full" within 1%, see the simulator); "full": play every GPU.
  std::string mode = "symmetric";
};

// One row of a steps-to-target table: at this global batch (samples per step, over all
// replicas) the target took this many steps, or this many epochs; exactly one is given.
struct StepsToTargetRow {
  std::int64_t global_batch = 0;
  std::optional<double> steps;
  std::optional<double> epochs;
};

// The scenario's `training` key: what time to train is computed from (time_to_train.hpp). The
// size of an epoch is io.samples, or the data set of the zoo model's published figures.
struct TrainingSection {
  TrainingTarget target = TrainingTarget::none;
  std::vector<StepsToTargetRow> steps_to_target;  // target table
  std::optional<double> critical_batch;           // target critical_batch: B_noise, samples
  std::optional<double> min_steps;                // S_min ...
  std::optional<double> min_epochs;               // ... or E_min in epochs
  std::string source;                             // where the numbers come from, in words
  SourceLocation where;
};

struct RealSection {
  std::int64_t warmup_steps = 2;
  std::int64_t measured_steps = 10;
  bool deterministic = false;  // only deterministic convolution algorithms (bit-reproducible)
};

struct Scenario {
  std::string file;  // as given by the user
  std::string name;
  std::string description;
  ModelSection model;
  ParallelismSection parallelism;
  MicroBatchingSection micro_batching;
  MemorySection memory;
  IoSection io;
  PlatformSection platform;
  std::optional<SweepSection> sweep;
  OutputsSection outputs;
  SimSection sim;
  RealSection real;
  // Absent: the zoo model's published statistical efficiency, if it has one.
  std::optional<TrainingSection> training;
  std::map<std::string, SourceLocation> where;  // location of every key path, for later checks
};

}  // namespace tessera

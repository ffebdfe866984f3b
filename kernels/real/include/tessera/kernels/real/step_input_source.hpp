#pragma once
// Where a rank's step inputs come from: the synthetic data set generated in memory, or HDF5
// sample files read as the scenario's io section says: only the rank's sub-volume (one hyperslab)
// or the whole sample cut down afterwards (read_sub_volume), on a thread reading one sample ahead
// or when asked (prefetch), and, with a data store (store: memory or node_local), kept in host
// memory once read so that later epochs read no file (one machine: the store's copy is local).
// Both deal samples the same way: step s gives a replica the samples s x global_batch +
// samples_before ... + mini_batch - 1 (its own mini-batch), modulo the data set's size.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/model/training_task.hpp"
#include "tessera/core/scenario/scenario.hpp"
#include "tessera/core/strategy/input_source.hpp"
#include "tessera/kernels/io/dataset_index.hpp"
#include "tessera/kernels/real/step_input.hpp"
#include "tessera/kernels/real/synthetic_input.hpp"

namespace tessera::kernels::real {

struct InputPlacement {
  std::int64_t samples_before = 0;  // the earlier replicas' samples in each step
  std::int64_t mini_batch = 1;      // the replica's samples in each step
  std::int64_t global_batch = 1;
  std::vector<std::int64_t> first;  // the rank's planes of the input, per spatial axis
  std::vector<std::int64_t> count;
};

class StepInputSource {
 public:
  virtual ~StepInputSource() = default;
  // The next step's input; `io_seconds` is the time the caller waited for it (generation, or the
  // prefetcher's stall).
  virtual StepInput next(double& io_seconds) = 0;
  // Where the last step's samples came from (input_source.hpp): files, the store, or nowhere.
  virtual InputSource last_source() const = 0;
  virtual std::string description() const = 0;
  // The first malformed value this rank's input held (a non-finite volume value or target, a
  // label outside the model's classes), naming the file and dataset; null while all were sound.
  // next() never throws for them: the ranks stop together once they have compared notes.
  virtual const InputError* input_problem() const { return nullptr; }
  // The staging phase (input_source.hpp), before the first step: where the input plan stages the
  // data set, reads the rank's share of it into its store: every sample the run's steps give its
  // replica (its part of each), at most an epoch's, so that the store holds no more than the
  // run reads; returns the seconds it took (0: nothing staged).
  virtual double stage() { return 0; }
};

std::unique_ptr<StepInputSource> synthetic_input_source(const SyntheticInput& source,
                                                        const InputPlacement& placement);
// io.dataset indexed (tessera data generate's layouts: CosmoFlow's for a regression of four
// values, 3D U-Net's to label voxels) and checked against the model's input `sample` and its
// task: throws tessera::InputError naming the directory or file where it does not fit. A run
// checks it before it builds its trainer, so that a bad data set stops it at once.
io::DatasetIndex checked_hdf5_dataset(const IoSection& io, const TensorShape& sample,
                                      const TargetLayout& targets);
// Reads the samples of `steps` steps from the checked `dataset`. After the first epoch samples
// come from `later_epochs` (the input plan's, input_source.hpp): kept in host memory when that
// is a store, read again when it is the file system. `staged`: the plan stages the data set
// (stage() reads the rank's share before the first step, which then reads the store).
std::unique_ptr<StepInputSource> hdf5_input_source(const io::DatasetIndex& dataset,
                                                   const IoSection& io, const TargetLayout& targets,
                                                   const InputPlacement& placement,
                                                   std::int64_t steps, InputSource later_epochs,
                                                   bool staged = false);

}  // namespace tessera::kernels::real

#pragma once
// The redistribution before the first unsplit layer (the step program's group all-to-all): the
// replica's mini-batch of m samples, held as spatial shards by the p ranks of its group, becomes
// plain data parallelism inside the group. Rank r keeps k whole samples: m / p of them from
// r * k on when p divides m, else (m < p, m dividing p) sample r / (p / m) alone, so p / m ranks
// hold each sample (one sample: an all-gather). Forward, every rank sends each peer its planes of
// that peer's samples; backward returns the peers' gradients of its planes and adds those of a
// sample held several times. The losses' scale makes the duplicates count once (dense_parts in
// execution_context.hpp).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "tessera/kernels/communicator.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/tensor_scatter.hpp"

namespace tessera::kernels::real {

// The samples rank `rank` of `parts` keeps of `samples`: the first one and how many.
struct KeptSamples {
  std::int64_t first = 0;
  std::int64_t count = 0;
};
KeptSamples kept_samples(std::int64_t samples, std::int64_t parts, std::int64_t rank);
// Why `samples` cannot be redistributed over `parts` ranks, if they cannot.
std::optional<std::string> redistribution_unsupported(std::int64_t samples, std::int64_t parts);

class SpatialRedistribution {
 public:
  // `distribution` is the producer's tensor over the group (group rank = shard index).
  SpatialRedistribution(Device& device, Communicator& group, TensorDistribution distribution,
                        std::int64_t samples, std::int64_t channels);
  KeptSamples kept() const;
  std::int64_t whole_floats() const;  // the kept samples' whole tensor
  // whole = the kept samples' whole tensor, from every rank's shard.
  void forward(const float* shard, float* whole);
  // shard_gradient = (or +=) the sum of every rank's gradient of this rank's planes.
  void backward(const float* whole_gradient, float* shard_gradient, bool accumulate);
  double allocated_bytes() const;

 private:
  std::int64_t shard_floats(std::int64_t rank) const;  // one sample's planes of rank's shard

  Device& device_;
  Communicator& group_;
  TensorDistribution distribution_;
  std::int64_t samples_;
  std::int64_t channels_;
  std::size_t block_floats_ = 0;  // every all-to-all block has this size
  std::unique_ptr<DeviceMemory> send_;
  std::unique_ptr<DeviceMemory> receive_;
};

}  // namespace tessera::kernels::real

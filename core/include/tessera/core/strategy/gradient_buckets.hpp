#pragma once
// Gradient buckets: the layers whose parameter gradients are summed together (all-reduced, or
// reduce-scattered where memory.shard splits them), in the order backward finishes them, each
// bucket closing once it holds the scenario's sim.gradient_bucket_bytes (PyTorch DDP's rule).
// The step program posts each bucket as it closes; the memory plan sizes the buffers of the
// buckets in flight from the same rule.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tessera/core/common/dtype.hpp"
#include "tessera/core/model/model_graph.hpp"
#include "tessera/core/scenario/scenario.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"

namespace tessera {

// Layers whose parameter gradients are summed together, in the order backward finishes them
// (so each bucket is a contiguous range of layers, last layer first).
struct GradientBucket {
  std::vector<std::size_t> layers;
  double bytes = 0;
};

class GradientBucketing {
 public:
  explicit GradientBucketing(double bucket_bytes) : bucket_bytes_(bucket_bytes) {}
  // Adds a layer's gradients to the open bucket; true when that fills it (take it with close()).
  bool add(std::size_t layer, double bytes);
  // The open bucket, leaving an empty one open.
  GradientBucket close();
  bool empty() const { return open_.layers.empty(); }

 private:
  double bucket_bytes_;
  GradientBucket open_;
};

// The buckets of `stage`'s layers with parameters, as its program's last backward pass forms them.
std::vector<GradientBucket> gradient_buckets(const ShardPlan& plan, int stage, double bucket_bytes,
                                             DType dtype);

// Whether sharded gradients (ZeRO-2/3) are held whole only while their bucket is summed: with
// `summing_gpus` > 1 and one backward pass per step. The step program then waits for bucket b-1's
// reduce-scatter once bucket b is posted, so that at most two buckets' whole gradients are held
// with each GPU's 1/N; a table whose gradients a later layer writes first (a tied head) is held
// whole from that write. Over several micro-batches the gradients add up whole.
bool stages_gradients(ShardLevel shard, std::int64_t summing_gpus, std::int64_t micro_batches);

// What a GPU of `stage` holds of the gradients whole where they are staged: two buckets' buffers
// in turn (one where there is one bucket), and the tables a later layer on the stage writes
// first (a tied head), whole from that write to their own bucket's sum, in buffers of their own
// (a bucket's buffer holds its other layers').
double staged_gradient_bytes(const ModelGraph& model, const ShardPlan& plan, int stage,
                             double bucket_bytes, DType dtype);

}  // namespace tessera

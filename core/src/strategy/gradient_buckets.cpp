#include "tessera/core/strategy/gradient_buckets.hpp"

#include <utility>

namespace tessera {

bool GradientBucketing::add(std::size_t layer, double bytes) {
  open_.layers.push_back(layer);
  open_.bytes += bytes;
  return open_.bytes >= bucket_bytes_;
}

GradientBucket GradientBucketing::close() {
  return std::exchange(open_, GradientBucket{});
}

std::vector<GradientBucket> gradient_buckets(const ShardPlan& plan, int stage, double bucket_bytes,
                                             DType dtype) {
  std::vector<GradientBucket> buckets;
  GradientBucketing bucketing(bucket_bytes);
  for (std::size_t i = plan.layers.size(); i-- > 0;) {
    const auto& layer = plan.layers[i];
    if (layer.stage != stage || layer.parameters <= 0) continue;
    const double bytes =
        static_cast<double>(layer.parameters) * static_cast<double>(dtype_bytes(dtype));
    if (bucketing.add(i, bytes)) buckets.push_back(bucketing.close());
  }
  if (!bucketing.empty()) buckets.push_back(bucketing.close());
  return buckets;
}

bool stages_gradients(ShardLevel shard, std::int64_t summing_gpus, std::int64_t micro_batches) {
  return shard >= ShardLevel::gradients && summing_gpus > 1 && micro_batches == 1;
}

}  // namespace tessera

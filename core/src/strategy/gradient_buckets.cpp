#include "tessera/core/strategy/gradient_buckets.hpp"

#include <algorithm>
#include <utility>

#include "tessera/core/strategy/table_copies.hpp"

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

double staged_gradient_bytes(const ModelGraph& model, const ShardPlan& plan, int stage,
                             double bucket_bytes, DType dtype) {
  const auto buckets = gradient_buckets(plan, stage, bucket_bytes, dtype);
  const auto written_early = tables_written_early(table_copies(model, plan), plan, stage);
  double tables = 0;
  for (std::size_t i = 0; i < written_early.size(); ++i) {
    if (written_early[i]) tables += static_cast<double>(plan.layers[i].parameters);
  }
  // A bucket's buffer holds its other layers' gradients.
  double largest_bucket = 0;
  for (const auto& bucket : buckets) {
    double parameters = 0;
    for (std::size_t layer : bucket.layers) {
      if (!written_early[layer]) parameters += static_cast<double>(plan.layers[layer].parameters);
    }
    largest_bucket = std::max(largest_bucket, parameters);
  }
  return (static_cast<double>(std::min<std::size_t>(buckets.size(), 2)) * largest_bucket + tables) *
         static_cast<double>(dtype_bytes(dtype));
}

bool stages_gradients(ShardLevel shard, std::int64_t summing_gpus, std::int64_t micro_batches) {
  return shard >= ShardLevel::gradients && summing_gpus > 1 && micro_batches == 1;
}

}  // namespace tessera

#include "tessera/core/point/point_input.hpp"

namespace tessera {

InputPlan plan_input(const LoadedScenario& loaded, std::int64_t gpus) {
  const auto& sample = loaded.model.layers().front().output_shape;
  const double sample_bytes =
      static_cast<double>(sample.elements_per_sample()) *
      static_cast<double>(stored_dtype_bytes(loaded.scenario.io.stored_dtype));
  return plan_input(loaded.scenario.io, loaded.cluster, gpus, sample_bytes);
}

}  // namespace tessera

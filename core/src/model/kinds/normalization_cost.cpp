#include "normalization_cost.hpp"

namespace tessera::kinds {
namespace {

constexpr double kForwardOpsPerElement = 5;
constexpr double kBackwardOpsPerElement = 8;
constexpr double kFilterOpsPerElement = 2;

}  // namespace

void add_normalization_cost(const LayerCostQuery& query, bool affine, LayerCost& cost) {
  const double elements = query.output_elements();
  cost.flops.forward = kForwardOpsPerElement * elements;
  cost.flops.backward_data = kBackwardOpsPerElement * elements;
  cost.flops.backward_filter = affine ? kFilterOpsPerElement * elements : 0;
}

}  // namespace tessera::kinds

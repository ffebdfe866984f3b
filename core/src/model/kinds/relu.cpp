// ReLU: its backward reads its output (the gradient passes where the output is positive).
#include "element_wise_rules.hpp"

namespace tessera::kinds {
namespace {

class ReluRules final : public ElementWiseRules {
 public:
  ReluRules() : ElementWiseRules(1, 1) {}
  BackwardNeeds backward_needs(const Layer& /*layer*/) const override { return {.output = true}; }
};

}  // namespace

const LayerKindRules& relu_rules() {
  static const ReluRules rules;
  return rules;
}

}  // namespace tessera::kinds

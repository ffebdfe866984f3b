#pragma once
// Step ops built by hand, for the tests of the plan's lower bounds (plan_space_test,
// communication_bound_test).
#include "tessera/core/strategy/step_program.hpp"

namespace tessera::test {

inline StepOp compute_op(double seconds) {
  StepOp op;
  op.seconds = seconds;
  return op;
}

// An op of `kind` counted as communication; the caller sets what it moves.
inline StepOp communication_op(StepOpKind kind) {
  StepOp op;
  op.kind = kind;
  op.category = OpCategory::other_communication;
  return op;
}

}  // namespace tessera::test

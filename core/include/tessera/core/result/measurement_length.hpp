#pragma once
// How many steps a real run trains so that its measurement lasts a given time. On a shared
// machine the speed moves over seconds to minutes (docs/measurements/2026-12-01-cpu-interleaved-
// profile.md): a few steps see one moment of it, while a profile spread over minutes sees many.
#include <cstdint>

#include "tessera/core/scenario/scenario.hpp"

namespace tessera {

struct StepCounts {
  std::int64_t warmup = 0;
  std::int64_t measured = 0;
};

// At least the scenario's own counts; with `seconds` > 0 and a step of about `step_seconds`
// (the simulated one), enough measured steps to fill `seconds` and warm-up steps for a tenth of
// it (a process's first steps run slower while its memory and kernels settle), each at most
// kMaxMeasuredSteps.
StepCounts steps_for_seconds(const RealSection& scenario, double seconds, double step_seconds);

inline constexpr std::int64_t kMaxMeasuredSteps = 1000000;  // the scenario parser's bound

}  // namespace tessera

#pragma once
// The classes a sampled softmax scores besides each position's target (Jean et al. 2015), drawn
// as TensorFlow's log_uniform_candidate_sampler with unique = true draws them: class c with
// probability P(c) = log((c + 2) / (c + 1)) / log(V + 1) (frequent words, low ids, more often),
// drawn until `count` distinct classes came up. Each class's expected count over those draws,
// Q(c) = 1 - (1 - P(c))^draws, is what sampled_softmax_loss subtracts the log of from its logit.
#include <cstdint>
#include <vector>

namespace tessera::kernels::real {

struct SampledClasses {
  std::vector<std::int32_t> classes;  // distinct, in the order drawn
  std::int64_t draws = 0;             // draws it took to find them
  std::int64_t vocabulary = 0;

  // log Q(c) of class `c`.
  double log_expected_count(std::int64_t c) const;
};

// `count` distinct classes of [0, vocabulary), from a generator seeded by `seed`: the same seed
// gives the same classes. Throws std::invalid_argument unless 0 < count < vocabulary.
SampledClasses sample_log_uniform(std::int64_t vocabulary, std::int64_t count, std::uint64_t seed);

}  // namespace tessera::kernels::real

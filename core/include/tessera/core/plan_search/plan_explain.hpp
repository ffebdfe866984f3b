#pragma once
// Why `tessera plan` chose what it chose, in words (--explain): how the winner differs from the
// runner-up (strategy keys, then the step's breakdown part by part, largest difference first),
// and why the candidates that were not simulated were left out, grouped by reason.
#include <cstddef>
#include <optional>
#include <string>

#include "tessera/core/plan_search/plan_search.hpp"

namespace tessera {

// "" when fewer than two candidates were simulated. The runner-up is the best candidate whose
// result differs from the winner's; those that tie with it are listed.
std::string explain_winner(const PlanSearchResult& search, const PlanSearchOptions& options);

// Per reason (invalid, over memory, bounded, not reached, failed): how many, and up to
// `examples` of them with their reason.
std::string explain_pruned(const PlanSearchResult& search, std::size_t examples);

// Where the scenario's own strategy ended up (rank, or why it was pruned); "" when it is not
// among the candidates (another GPU count, or pinned keys exclude it).
std::string explain_own_strategy(const PlanSearchResult& search, const PlanStrategy& own,
                                 const PlanSearchOptions& options);

// For a search without a time budget that may run long: how many candidates are undecided and
// how long simulating them all would take at the time each simulation has taken so far (an upper
// bound: pruning may decide many of them unsimulated), with the option that ends it sooner. ""
// before `kSimulationsToEstimate` simulations or where that time is under `quiet_seconds`.
inline constexpr std::size_t kSimulationsToEstimate = 16;
std::string long_search_warning(std::size_t undecided, std::size_t simulated,
                                double simulating_seconds, double quiet_seconds = 600);

// "step per sample", "time-to-train", "samples-per-joule".
std::string objective_label(PlanObjective objective);

// The objective's value in its unit: "1.234 ms/sample", "2.41 h", "12.3 samples/J".
std::string format_objective(double score, PlanObjective objective);

}  // namespace tessera

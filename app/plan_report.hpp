#pragma once
// What `tessera plan` prints: the best candidates with their step, throughput, time to train,
// memory and breakdown, the Pareto front of the objective against memory, and how many
// candidates each stage of the search left out. Only deterministic text goes here (no wall
// times), so that the same inputs print the same report however the search was run.
#include <string>

#include "tessera/core/plan_search/plan_search.hpp"

namespace tessera::app {

std::string ranking_table(const PlanSearchResult& search, const PlanSearchOptions& options,
                          std::size_t top);
std::string pareto_table(const PlanSearchResult& search, const PlanSearchOptions& options);
// "1,234 candidates: 300 invalid, 200 over memory, 500 bounded, 234 simulated (12 kept ...)"
std::string search_counts(const PlanSearchResult& search);

}  // namespace tessera::app

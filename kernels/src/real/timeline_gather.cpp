#include "timeline_gather.hpp"

#include <algorithm>
#include <stdexcept>

namespace tessera::kernels::real {

std::vector<TimelineEvent> gather_timelines(Communicator& ranks,
                                            const std::vector<TimelineEvent>& mine,
                                            const std::set<int>& wanted) {
  constexpr std::size_t kFields = 4;  // track, category, start, end
  // Every rank's event count first: a rank that played something else cannot be merged.
  std::vector<double> counts(static_cast<std::size_t>(ranks.size()), 0.0);
  counts[static_cast<std::size_t>(ranks.rank())] = static_cast<double>(mine.size());
  ranks.allreduce_sum(counts.data(), counts.size());
  for (double count : counts) {
    if (count != static_cast<double>(mine.size())) {
      throw std::logic_error(
          "the ranks' timelines differ in length: they did not play one program");
    }
  }
  const std::size_t per_rank = mine.size() * kFields;
  std::vector<double> all(per_rank * static_cast<std::size_t>(ranks.size()), 0.0);
  auto* own = all.data() + per_rank * static_cast<std::size_t>(ranks.rank());
  for (std::size_t i = 0; i < mine.size(); ++i) {
    own[kFields * i] = static_cast<double>(mine[i].track);
    own[kFields * i + 1] = static_cast<double>(mine[i].category);
    own[kFields * i + 2] = mine[i].start_seconds;
    own[kFields * i + 3] = mine[i].end_seconds;
  }
  ranks.allreduce_sum(all.data(), all.size());
  std::vector<TimelineEvent> events;
  if (ranks.rank() != 0) return events;
  for (int rank : wanted) {
    if (rank < 0 || rank >= ranks.size()) continue;
    const auto* theirs = all.data() + per_rank * static_cast<std::size_t>(rank);
    for (std::size_t i = 0; i < mine.size(); ++i) {
      TimelineEvent event = mine[i];
      event.gpu = rank;
      if (theirs[kFields * i] != static_cast<double>(mine[i].track) ||
          theirs[kFields * i + 1] != static_cast<double>(mine[i].category)) {
        throw std::logic_error("rank " + std::to_string(rank) +
                               "'s timeline differs from rank 0's at " + mine[i].name);
      }
      event.start_seconds = theirs[kFields * i + 2];
      event.end_seconds = theirs[kFields * i + 3];
      events.push_back(std::move(event));
    }
  }
  return events;
}

std::vector<MemorySample> gather_memory_samples(Communicator& ranks,
                                                const std::vector<MemorySample>& mine,
                                                const std::set<int>& wanted) {
  const auto size = static_cast<std::size_t>(ranks.size());
  const auto me = static_cast<std::size_t>(ranks.rank());
  std::vector<double> counts(size, 0.0);
  counts[me] = static_cast<double>(mine.size());
  ranks.allreduce_sum(counts.data(), counts.size());
  std::size_t most = 0;
  for (double count : counts) most = std::max(most, static_cast<std::size_t>(count));
  constexpr std::size_t kFields = 2;  // seconds, bytes
  const std::size_t per_rank = most * kFields;
  std::vector<double> all(per_rank * size, 0.0);
  for (std::size_t i = 0; i < mine.size(); ++i) {
    all[per_rank * me + kFields * i] = mine[i].seconds;
    all[per_rank * me + kFields * i + 1] = mine[i].bytes;
  }
  ranks.allreduce_sum(all.data(), all.size());
  std::vector<MemorySample> samples;
  if (ranks.rank() != 0) return samples;
  for (int rank : wanted) {
    if (rank < 0 || rank >= ranks.size()) continue;
    const auto r = static_cast<std::size_t>(rank);
    for (std::size_t i = 0; i < static_cast<std::size_t>(counts[r]); ++i) {
      samples.push_back(
          {rank, all[per_rank * r + kFields * i], all[per_rank * r + kFields * i + 1]});
    }
  }
  return samples;
}

}  // namespace tessera::kernels::real

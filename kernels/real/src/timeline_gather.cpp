#include "timeline_gather.hpp"

#include <nlohmann/json.hpp>

namespace tessera::kernels::real {
namespace {

nlohmann::json to_json(const std::vector<TimelineEvent>& events,
                       const std::vector<MemorySample>& memory) {
  nlohmann::json spans = nlohmann::json::array();
  for (const auto& e : events) {
    spans.push_back({static_cast<int>(e.track), e.name, static_cast<int>(e.category),
                     e.start_seconds, e.end_seconds, static_cast<int>(e.source), e.idle});
  }
  nlohmann::json samples = nlohmann::json::array();
  for (const auto& sample : memory) samples.push_back({sample.seconds, sample.bytes});
  return {{"events", spans}, {"memory", samples}};
}

void add_from_json(const nlohmann::json& document, int rank, MeasuredTimeline& into) {
  for (const auto& e : document.at("events")) {
    into.events.push_back({.gpu = rank,
                           .track = static_cast<TimelineTrack>(e.at(0).get<int>()),
                           .name = e.at(1).get<std::string>(),
                           .category = static_cast<OpCategory>(e.at(2).get<int>()),
                           .start_seconds = e.at(3).get<double>(),
                           .end_seconds = e.at(4).get<double>(),
                           .source = static_cast<Provenance>(e.at(5).get<int>()),
                           .idle = e.at(6).get<bool>()});
  }
  for (const auto& s : document.at("memory")) {
    into.memory.push_back({rank, s.at(0).get<double>(), s.at(1).get<double>()});
  }
}

// Every rank's text on rank 0 (empty strings elsewhere), carried as one byte per float through
// a sum: each rank fills its own slice of a buffer the others leave at zero.
std::vector<std::string> gather_texts(Communicator& ranks, const std::string& mine) {
  const auto size = static_cast<std::size_t>(ranks.size());
  const auto me = static_cast<std::size_t>(ranks.rank());
  std::vector<double> lengths(size, 0.0);
  lengths[me] = static_cast<double>(mine.size());
  ranks.allreduce_sum(lengths.data(), lengths.size());
  std::vector<std::size_t> offsets(size + 1, 0);
  for (std::size_t r = 0; r < size; ++r) {
    offsets[r + 1] = offsets[r] + static_cast<std::size_t>(lengths[r]);
  }
  std::vector<float> bytes(offsets[size], 0.0F);
  for (std::size_t i = 0; i < mine.size(); ++i) {
    bytes[offsets[me] + i] = static_cast<float>(static_cast<unsigned char>(mine[i]));
  }
  if (!bytes.empty()) ranks.allreduce_sum(bytes.data(), bytes.size());
  std::vector<std::string> texts(size);
  if (ranks.rank() != 0) return texts;
  for (std::size_t r = 0; r < size; ++r) {
    for (std::size_t i = offsets[r]; i < offsets[r + 1]; ++i) {
      texts[r].push_back(static_cast<char>(static_cast<unsigned char>(bytes[i])));
    }
  }
  return texts;
}

}  // namespace

MeasuredTimeline gather_timeline(Communicator& ranks, const std::vector<TimelineEvent>& events,
                                 const std::vector<MemorySample>& memory,
                                 const std::set<int>& wanted) {
  const bool traced = wanted.count(ranks.rank()) > 0;
  const auto texts = gather_texts(ranks, traced ? to_json(events, memory).dump() : std::string());
  MeasuredTimeline timeline;
  if (ranks.rank() != 0) return timeline;
  for (int rank : wanted) {
    if (rank < 0 || rank >= ranks.size()) continue;
    add_from_json(nlohmann::json::parse(texts[static_cast<std::size_t>(rank)]), rank, timeline);
  }
  return timeline;
}

}  // namespace tessera::kernels::real

#include "tessera/kernels/profile/gathered_rows.hpp"

namespace tessera::kernels {

ProfileDatabase rows_of_other_ranks(Communicator& ranks, const ProfileDatabase& mine,
                                    const ProfileMetadata& metadata, const std::string& what) {
  const auto texts = ranks.gather_text(mine.size() > 0 ? mine.to_csv(metadata) : std::string());
  ProfileDatabase theirs;
  for (std::size_t r = 1; r < texts.size(); ++r) {
    if (texts[r].empty()) continue;
    theirs.load_csv_text(texts[r], "rank " + std::to_string(r) + "'s " + what);
  }
  return theirs;
}

}  // namespace tessera::kernels

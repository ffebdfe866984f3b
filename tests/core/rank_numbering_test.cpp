// One numbering of the GPU ranks for both backends: rank = ((replica * stages + stage) *
// spatial_parts + spatial index) * tensor + tensor index, spatial indices row-major over the grid.
#include "tessera/core/strategy/rank_numbering.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace tessera {
namespace {

TEST(RankNumbering, RanksFollowReplicaThenStageThenSpatialIndex) {
  ParallelConfig config;
  config.data = 2;
  config.model_degree = 3;
  config.spatial_grid = {2, 2};
  const RankNumbering numbering(config);
  ASSERT_EQ(numbering.gpus(), 24);
  for (int rank = 0; rank < 24; ++rank) {
    EXPECT_EQ((numbering.replica_of(rank) * 3 + numbering.stage_of(rank)) * 4 +
                  numbering.spatial_index_of(rank),
              rank);
  }
  EXPECT_EQ(numbering.replica_of(13), 1);
  EXPECT_EQ(numbering.stage_of(13), 0);
  EXPECT_EQ(numbering.spatial_index_of(13), 1);
  EXPECT_EQ(numbering.peer_in_stage(13, 2), 21);
  EXPECT_EQ(numbering.spatial_group(13), (std::vector<int>{12, 13, 14, 15}));
  EXPECT_EQ(numbering.stage_group(1, 0), (std::vector<int>{4, 5, 6, 7, 16, 17, 18, 19}));
  EXPECT_EQ(numbering.tensor_group(13), (std::vector<int>{13}));
}

TEST(RankNumbering, TensorGroupsAreInnermostSoThatTheyShareANode) {
  ParallelConfig config;
  config.data = 2;
  config.model_degree = 2;
  config.spatial_grid = {2};
  config.tensor = 4;
  const RankNumbering numbering(config);
  ASSERT_EQ(numbering.gpus(), 32);
  for (int rank = 0; rank < 32; ++rank) {
    EXPECT_EQ(((numbering.replica_of(rank) * 2 + numbering.stage_of(rank)) * 2 +
               numbering.spatial_index_of(rank)) *
                      4 +
                  numbering.tensor_index_of(rank),
              rank);
  }
  // Rank 13: replica 0, stage 1, spatial index 1, tensor index 1.
  EXPECT_EQ(numbering.tensor_group(13), (std::vector<int>{12, 13, 14, 15}));
  EXPECT_EQ(numbering.spatial_group(13), (std::vector<int>{9, 13}));
  EXPECT_EQ(numbering.neighbour(13, 0, -1), 9);
  EXPECT_EQ(numbering.neighbour(13, 0, +1), -1);
  EXPECT_EQ(numbering.peer_in_stage(13, 0), 5);
  // The same stage and shard in every replica and spatial position sum the same gradients.
  EXPECT_EQ(numbering.stage_group(1, 1), (std::vector<int>{9, 13, 25, 29}));
}

TEST(RankNumbering, NeighboursAreRowMajorOverTheGridAndNoneAtTheEdges) {
  ParallelConfig config;
  config.data = 1;
  config.spatial_grid = {2, 3};  // index = row * 3 + column
  const RankNumbering numbering(config);
  EXPECT_EQ(numbering.neighbour(4, 0, -1), 1);  // (1,1) -> (0,1)
  EXPECT_EQ(numbering.neighbour(4, 0, +1), -1);
  EXPECT_EQ(numbering.neighbour(4, 1, -1), 3);
  EXPECT_EQ(numbering.neighbour(4, 1, +1), 5);
  EXPECT_EQ(numbering.neighbour(5, 1, +1), -1);
}

}  // namespace
}  // namespace tessera

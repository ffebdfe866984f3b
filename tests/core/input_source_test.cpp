// Where samples come from, epoch by epoch (input_source.hpp): the rule both backends follow.
#include <gtest/gtest.h>

#include "tessera/core/strategy/input_source.hpp"

namespace tessera {
namespace {

ClusterSpec cluster() {
  ClusterSpec cluster;
  cluster.nodes = 8;
  cluster.gpus_per_node = 4;
  cluster.node.host_memory_bytes = 256e9;
  cluster.node.local_storage_bytes = 1e12;
  cluster.node.local_storage_bandwidth_bytes_per_second = 3e9;
  return cluster;
}

IoSection files(DataStore store, std::optional<std::int64_t> samples = std::nullopt) {
  IoSection io;
  io.format = DatasetFormat::hdf5;
  io.store = store;
  io.samples = samples;
  return io;
}

TEST(InputPlan, SyntheticSamplesAreReadFromNowhere) {
  const auto plan = plan_input(IoSection{}, cluster(), 32, 1e9);
  EXPECT_EQ(plan.first_epoch, InputSource::none);
  EXPECT_EQ(plan.later_epochs, InputSource::none);
  EXPECT_FALSE(plan.epochs_differ());
}

TEST(InputPlan, WithoutAStoreEveryEpochReadsTheFileSystem) {
  const auto plan = plan_input(files(DataStore::none), cluster(), 32, 1e9);
  EXPECT_EQ(plan.first_epoch, InputSource::file_system);
  EXPECT_EQ(plan.later_epochs, InputSource::file_system);
  EXPECT_TRUE(plan.note.empty());
}

TEST(InputPlan, AStoreServesTheEpochsAfterTheFirst) {
  const auto memory = plan_input(files(DataStore::memory), cluster(), 32, 1e9);
  EXPECT_EQ(memory.first_epoch, InputSource::file_system);
  EXPECT_EQ(memory.later_epochs, InputSource::peer_memory);
  EXPECT_TRUE(memory.epochs_differ());
  EXPECT_NE(memory.note.find("io.samples not given"), std::string::npos);
  EXPECT_NE(memory.description().find("steady state"), std::string::npos);
  const auto local = plan_input(files(DataStore::node_local), cluster(), 32, 1e9);
  EXPECT_EQ(local.later_epochs, InputSource::node_local_storage);
}

TEST(InputPlan, AStoreTooSmallForItsShareOfTheDataSetIsNotUsed) {
  // 2,048 samples of 1 GB on 8 nodes: 256 GB a node fits 256 GB of host memory; one more does not.
  EXPECT_EQ(plan_input(files(DataStore::memory, 2048), cluster(), 32, 1e9).later_epochs,
            InputSource::peer_memory);
  const auto full = plan_input(files(DataStore::memory, 2049), cluster(), 32, 1e9);
  EXPECT_EQ(full.later_epochs, InputSource::file_system);
  EXPECT_NE(full.note.find("does not fit"), std::string::npos) << full.note;
  // Fewer GPUs, fewer nodes: each holds a larger share. 16 GPUs are 4 nodes.
  EXPECT_EQ(plan_input(files(DataStore::memory, 1024), cluster(), 16, 1e9).later_epochs,
            InputSource::peer_memory);
  EXPECT_EQ(plan_input(files(DataStore::memory, 1025), cluster(), 16, 1e9).later_epochs,
            InputSource::file_system);
  // Node-local storage holds 1 TB a node.
  EXPECT_EQ(plan_input(files(DataStore::node_local, 8000), cluster(), 32, 1e9).later_epochs,
            InputSource::node_local_storage);
  EXPECT_EQ(plan_input(files(DataStore::node_local, 8001), cluster(), 32, 1e9).later_epochs,
            InputSource::file_system);
}

TEST(InputPlan, ThePageCacheServesLaterEpochsWhenANodesShareFitsItsHostMemory) {
  // Each rank rereads its own files: after the first epoch the node's 256 GB share (2,048
  // samples of 1 GB on 8 nodes) sits in its 256 GB of host memory; one sample more does not fit.
  const auto fits = plan_input(files(DataStore::page_cache, 2048), cluster(), 32, 1e9);
  EXPECT_EQ(fits.first_epoch, InputSource::file_system);
  EXPECT_EQ(fits.later_epochs, InputSource::page_cache);
  EXPECT_NE(fits.description().find("page cache"), std::string::npos) << fits.description();
  const auto full = plan_input(files(DataStore::page_cache, 2049), cluster(), 32, 1e9);
  EXPECT_EQ(full.later_epochs, InputSource::file_system);
  EXPECT_NE(full.note.find("host memory"), std::string::npos) << full.note;
}

// MLPerf HPC's staged submissions copy the data set to the nodes before training: a phase of its
// own, after which every epoch, the first too, reads the staged copy.
TEST(InputPlan, StagingToLocalStorageIsAPhaseBeforeTheFirstStep) {
  const auto staged = plan_input(files(DataStore::node_local, 8000), cluster(), 32, 1e9);
  EXPECT_TRUE(staged.staged);
  EXPECT_EQ(staged.first_epoch, InputSource::node_local_storage);
  EXPECT_FALSE(staged.epochs_differ());
  EXPECT_DOUBLE_EQ(staged.staged_bytes_per_node, 8000 * 1e9 / 8);  // 8 nodes
  EXPECT_NE(staged.description().find("stages its share"), std::string::npos)
      << staged.description();
  // Without io.samples the share, and so the staging's time, is unknown.
  const auto unknown = plan_input(files(DataStore::node_local), cluster(), 32, 1e9);
  EXPECT_TRUE(unknown.staged);
  EXPECT_DOUBLE_EQ(unknown.staged_bytes_per_node, 0);
  // A data store in host memory fills during the first epoch: nothing is staged.
  EXPECT_FALSE(plan_input(files(DataStore::memory, 2048), cluster(), 32, 1e9).staged);
  EXPECT_FALSE(plan_input(files(DataStore::node_local, 8001), cluster(), 32, 1e9).staged);
  // The validation set is staged with it, and must fit with it.
  auto with_validation = files(DataStore::node_local, 6000);
  with_validation.validation_samples = 2000;
  EXPECT_DOUBLE_EQ(plan_input(with_validation, cluster(), 32, 1e9).staged_bytes_per_node,
                   8000 * 1e9 / 8);
  with_validation.validation_samples = 2001;
  EXPECT_FALSE(plan_input(with_validation, cluster(), 32, 1e9).staged);
}

TEST(InputPlan, ANodeWithoutLocalStorageCannotStage) {
  auto bare = cluster();
  bare.node.local_storage_bytes = 0;
  const auto plan = plan_input(files(DataStore::node_local), bare, 32, 1e9);
  EXPECT_EQ(plan.later_epochs, InputSource::file_system);
  EXPECT_NE(plan.note.find("no local storage"), std::string::npos) << plan.note;
}

}  // namespace
}  // namespace tessera

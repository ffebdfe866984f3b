// The plan's lower bound from the transfers a GPU waits for (communication_bound.hpp): each op's
// flows no faster than the links they share allow.
#include <gtest/gtest.h>

#include "step_op_test_support.hpp"
#include "tessera/core/plan_search/communication_bound.hpp"

namespace tessera {
namespace {

using test::compute_op;

StepOp halo_op(StepOpKind kind, int axis, int exchange, double to_lower, double to_upper) {
  StepOp op;
  op.kind = kind;
  op.category = OpCategory::halo;
  op.axis = axis;
  op.exchange = exchange;
  op.bytes_to_lower = to_lower;
  op.bytes_to_upper = to_upper;
  return op;
}

StepOp group_op(StepOpKind kind, CollectiveGroup group, double bytes) {
  StepOp op = test::communication_op(kind);
  op.group = group;
  op.bytes = bytes;
  return op;
}

// One GPU per node: every neighbour is reached through the GPU's PCIe link and its node's NIC.
ClusterSpec single_gpu_nodes(std::int64_t nodes) {
  ClusterSpec cluster;
  cluster.nodes = nodes;
  cluster.gpus_per_node = 1;
  cluster.node.pcie_bandwidth_bytes_per_second = 20e9;
  cluster.node.nic_bandwidth_bytes_per_second = 10e9;
  return cluster;
}

ParallelConfig depth_split(std::int64_t parts) {
  ParallelConfig config;
  config.spatial_grid = {parts, 1, 1};
  return config;
}

TEST(CommunicationBound, AHaloExchangeEndsNoSoonerThanItsFlowsThroughTheBusiestLink) {
  StepProgram program;
  program.ops = {compute_op(1), halo_op(StepOpKind::halo_start, 0, 0, 3e9, 2e9), compute_op(0.1),
                 halo_op(StepOpKind::halo_wait, 0, 0, 3e9, 2e9), compute_op(1)};
  // The middle GPU of three sends 3 GB down and 2 GB up through its 10 GB/s NIC: 0.5 s, of which
  // 0.1 s are hidden by compute. An edge GPU sends one side only (0.3 s at most).
  const CommunicationBoundSettings settings;
  EXPECT_DOUBLE_EQ(
      communication_step_bound({program}, depth_split(3), single_gpu_nodes(3), settings), 2.5);
  // SMPI's largest bandwidth factor lets the flows go faster.
  const CommunicationBoundSettings smpi{.bandwidth_factor = fastest_bandwidth_factor("SMPI")};
  EXPECT_NEAR(communication_step_bound({program}, depth_split(3), single_gpu_nodes(3), smpi),
              2.0 + 0.5 / 1.08739, 1e-12);
  // With the compute longer than the transfer, compute alone remains.
  program.ops[2] = compute_op(1);
  EXPECT_DOUBLE_EQ(
      communication_step_bound({program}, depth_split(3), single_gpu_nodes(3), settings), 3);
}

TEST(CommunicationBound, GroupCollectivesCountWhatEachMemberMustReceive) {
  // Four GPUs on one NVSwitch node: each receives over its own 100 GB/s port.
  ClusterSpec cluster;
  cluster.gpus_per_node = 4;
  cluster.node.gpu_interconnect = GpuInterconnect::nvswitch;
  cluster.node.gpu_link_bandwidth_bytes_per_second = 100e9;
  cluster.node.pcie_bandwidth_bytes_per_second = 10e9;
  cluster.node.nic_bandwidth_bytes_per_second = 10e9;
  const auto config = depth_split(4);
  StepProgram program;
  // All-to-all: 3 peers x 1 GB out through the port: 30 ms.
  program.ops = {group_op(StepOpKind::group_alltoall, CollectiveGroup::spatial, 1e9)};
  EXPECT_DOUBLE_EQ(communication_step_bound({program}, config, cluster, {}), 0.03);
  // All-gather of 4 GB: 3 GB in, 30 ms; all-reduce of 4 GB: at least the 4 GB, 40 ms.
  program.ops = {group_op(StepOpKind::group_allgather, CollectiveGroup::spatial, 4e9)};
  EXPECT_DOUBLE_EQ(communication_step_bound({program}, config, cluster, {}), 0.03);
  program.ops = {group_op(StepOpKind::group_allreduce, CollectiveGroup::spatial, 4e9)};
  EXPECT_DOUBLE_EQ(communication_step_bound({program}, config, cluster, {}), 0.04);
  // Unless a profile's measured time may stand for it.
  EXPECT_DOUBLE_EQ(
      communication_step_bound({program}, config, cluster, {.allreduce_may_be_measured = true}), 0);
}

TEST(CommunicationBound, MembersOnOtherNodesComeInNoFasterThanTheNic) {
  // Two GPUs per node over PCIe links of 20 GB/s, NICs of 10 GB/s: GPU 0 receives from GPU 1
  // over its PCIe link and from GPUs 2 and 3 through its NIC and the same PCIe link.
  ClusterSpec cluster = single_gpu_nodes(2);
  cluster.gpus_per_node = 2;
  cluster.node.gpu_interconnect = GpuInterconnect::pcie;
  StepProgram program;
  program.ops = {group_op(StepOpKind::group_allreduce, CollectiveGroup::spatial, 2e9)};
  EXPECT_DOUBLE_EQ(communication_step_bound({program}, depth_split(4), cluster, {}), 0.1);
  // With no member on its node, all of it comes through the NIC.
  cluster.gpus_per_node = 1;
  cluster.nodes = 4;
  EXPECT_DOUBLE_EQ(communication_step_bound({program}, depth_split(4), cluster, {}), 0.2);
}

TEST(CommunicationBound, GradientBucketsAreSummedOneAfterAnotherFromWhenEachIsQueued) {
  // Two replicas on two nodes: a GPU receives the other's gradients through its 10 GB/s NIC.
  ParallelConfig config;
  config.data = 2;
  StepOp first = group_op(StepOpKind::gradient_allreduce, CollectiveGroup::stage, 2e9);
  StepOp second = group_op(StepOpKind::gradient_allreduce, CollectiveGroup::stage, 1e9);
  StepOp wait = group_op(StepOpKind::gradient_wait, CollectiveGroup::stage, 0);
  StepProgram program;
  // Queued at 1 s and 1.1 s: summed by 1.2 s and 1.3 s; the wait at 1.2 s lasts until then.
  program.ops = {compute_op(1), first, compute_op(0.1), second, compute_op(0.1), wait};
  EXPECT_DOUBLE_EQ(communication_step_bound({program}, config, single_gpu_nodes(2), {}), 1.3);
  // A wait for the first bucket only.
  program.ops.back().bucket = 0;
  EXPECT_DOUBLE_EQ(communication_step_bound({program}, config, single_gpu_nodes(2), {}), 1.2);
  // A reduce-scatter receives half of the 2 GB from the other replica (0.1 s).
  first.kind = StepOpKind::gradient_reduce_scatter;
  program.ops = {compute_op(1), first, wait};
  EXPECT_DOUBLE_EQ(communication_step_bound({program}, config, single_gpu_nodes(2), {}), 1.1);
  // A measured all-reduce may take any time.
  program.ops = {compute_op(1), second, wait};
  EXPECT_DOUBLE_EQ(communication_step_bound({program}, config, single_gpu_nodes(2),
                                            {.allreduce_may_be_measured = true}),
                   1);
}

TEST(CommunicationBound, AStageMessageCrossesTheSlowestLinkBetweenTheStagesGpus) {
  ParallelConfig config;
  config.model_degree = 2;
  // One GPU per node: through the 10 GB/s NICs.
  EXPECT_DOUBLE_EQ(stage_transfer_seconds(config, single_gpu_nodes(2), {}, 0, 1, 1e9), 0.1);
  EXPECT_DOUBLE_EQ(stage_transfer_seconds(config, single_gpu_nodes(2), {}, 1, 0, 0), 0);
}

TEST(CommunicationBound, ASingleGpuHasNothingToWaitFor) {
  StepProgram program;
  program.ops = {compute_op(1),
                 group_op(StepOpKind::group_allreduce, CollectiveGroup::spatial, 1e9),
                 halo_op(StepOpKind::halo_start, 0, 0, 1e9, 1e9),
                 halo_op(StepOpKind::halo_wait, 0, 0, 1e9, 1e9)};
  EXPECT_DOUBLE_EQ(communication_step_bound({program}, depth_split(1), single_gpu_nodes(1), {}), 1);
}

}  // namespace
}  // namespace tessera

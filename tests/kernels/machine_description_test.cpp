// This machine's description for several ranks: the send/receive link fitted from profile rows,
// and the cluster file that carries it (nvswitch links, the cores and threads named), read back by
// the cluster parser; the measured rates it rests on.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "tessera/core/scenario/cluster_spec.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/profile/kernel_profiler.hpp"
#include "tessera/kernels/profile/machine_description.hpp"

namespace tessera::kernels {
namespace {

const std::vector<double> kSizes{4e3, 64e3, 1e6, 16e6, 256e6};

ProfileDatabase sendrecv_rows(int ranks, double latency_seconds, double bandwidth) {
  ProfileDatabase database;
  for (double bytes : kSizes) {
    database.add({.device = "cpu0",
                  .op = "sendrecv",
                  .shape = transfer_shape(bytes, ranks),
                  .micro_batch = 1,
                  .algorithm = "default",
                  .time_seconds = latency_seconds + bytes / bandwidth});
  }
  return database;
}

TEST(MachineDescription, RankLinkFitRecoversLatencyAndBandwidth) {
  const auto link = fit_rank_link(sendrecv_rows(4, 3e-6, 5e9), "cpu0", 4, kSizes);
  ASSERT_TRUE(link.has_value());
  EXPECT_NEAR(link->latency_seconds, 3e-6, 1e-9);
  EXPECT_NEAR(link->bandwidth_bytes_per_second, 5e9, 5e9 * 1e-6);
}

TEST(MachineDescription, RankLinkNeedsRowsOfThatRankCount) {
  EXPECT_FALSE(fit_rank_link(sendrecv_rows(4, 3e-6, 5e9), "cpu0", 2, kSizes).has_value());
  EXPECT_FALSE(fit_rank_link(sendrecv_rows(4, 3e-6, 5e9), "other", 4, kSizes).has_value());
}

TEST(MachineDescription, SeveralRanksBecomeNvswitchLinksTheClusterParserReads) {
  MachineFigures figures;
  figures.device_name = "cpu0";
  figures.library = "oneDNN";
  figures.memory_bytes = 8e9;
  figures.memory_bandwidth_bytes_per_second = 10e9;
  figures.fp32_flops_per_second = 50e9;
  figures.host_link_bandwidth_bytes_per_second = 4e9;
  figures.ranks = 2;
  figures.devices_per_node = 4;
  figures.rank_link_bandwidth_bytes_per_second = 12e9;
  figures.rank_link_latency_seconds = 4e-6;
  figures.cpu_cores = 2;
  figures.threads_per_rank = 1;
  figures.overlaps_communication = false;
  const auto yaml = cluster_yaml(figures, "test");
  EXPECT_NE(yaml.find("2 rank(s) sharing 2 CPU core(s), 1 compute thread(s) each"),
            std::string::npos);
  EXPECT_NE(yaml.find("overlaps_communication: false"), std::string::npos);
  const auto path = std::filesystem::temp_directory_path() /
                    ("tessera_machine_description_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << yaml;
  const auto cluster = load_cluster_file(path.string());
  std::filesystem::remove(path);
  EXPECT_EQ(cluster.gpus_per_node, 4);
  EXPECT_EQ(cluster.node.gpu_interconnect, GpuInterconnect::nvswitch);
  EXPECT_NEAR(cluster.node.gpu_link_bandwidth_bytes_per_second, 12e9, 1e3);
  EXPECT_NEAR(cluster.node.gpu_link_latency_seconds, 2e-6, 1e-12);  // two links per route
  EXPECT_NEAR(cluster.node.pcie_bandwidth_bytes_per_second, 4e9, 1e3);
  EXPECT_FALSE(cluster.gpu.overlaps_communication);
}

TEST(MachineDescription, OneRankKeepsThePcieDescription) {
  MachineFigures figures;
  figures.device_name = "cpu0";
  figures.memory_bytes = 8e9;
  figures.memory_bandwidth_bytes_per_second = 10e9;
  figures.fp32_flops_per_second = 50e9;
  figures.host_link_bandwidth_bytes_per_second = 4e9;
  const auto yaml = cluster_yaml(figures, "test");
  EXPECT_NE(yaml.find("gpu_interconnect: pcie"), std::string::npos);
  EXPECT_EQ(yaml.find("gpu_link_bandwidth"), std::string::npos);
}

// A GPU's host memory is the host's, not the GPU's (the H100 campaign's file of 2026-11-26 gave
// the host the GPU's 85 GB); without a figure (older callers) the device's memory stands in.
TEST(MachineDescription, HostMemoryIsTheHostsWhereMeasured) {
  MachineFigures figures;
  figures.device_name = "gpu0";
  figures.memory_bytes = 80e9;
  figures.memory_bandwidth_bytes_per_second = 3e12;
  figures.fp32_flops_per_second = 50e12;
  figures.host_link_bandwidth_bytes_per_second = 50e9;
  figures.host_memory_bytes = 128e9;
  EXPECT_NE(cluster_yaml(figures, "test").find("host_memory: 128.000000 GB"), std::string::npos);
  figures.host_memory_bytes = 0;
  EXPECT_NE(cluster_yaml(figures, "test").find("host_memory: 80.000000 GB"), std::string::npos);
}

// The two rates of the description, measured alone (validate-sim samples them to see the machine
// drift): finite and within what any CPU this runs on achieves, and the description's own.
TEST(MachineDescription, SpeedIsTheDescriptionsCopyAndGemmRates) {
  const auto device = open_cpu_device();
  const MachineSpeed speed = measure_machine_speed(*device);
  EXPECT_GT(speed.memory_bandwidth_bytes_per_second, 1e8);
  EXPECT_LT(speed.memory_bandwidth_bytes_per_second, 1e13);
  EXPECT_GT(speed.fp32_flops_per_second, 1e8);
  EXPECT_LT(speed.fp32_flops_per_second, 1e14);
  const MachineFigures figures = measure_machine(*device, ProfileDatabase{});
  EXPECT_GT(figures.fp32_flops_per_second, 1e8);
  EXPECT_GT(figures.host_link_bandwidth_bytes_per_second, 1e8);
}

}  // namespace
}  // namespace tessera::kernels

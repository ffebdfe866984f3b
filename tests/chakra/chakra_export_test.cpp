// Chakra execution traces of CosmoFlow points (chakra_export.hpp), read back with the schema:
// one file per GPU; per file as many compute, collective, send, receive and memory nodes as its
// stage's program has ops of those kinds; every dependency names an earlier node; the compute
// stream is one chain; what a wait waited for comes before the next op; every send has its
// receive on the peer, with the same tag and size (pipelined stages' too).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include "tessera/chakra/chakra_export.hpp"
#include "tessera/core/point/point_programs.hpp"
#include "tessera/core/strategy/halo_copies.hpp"
#include "tessera/core/strategy/rank_numbering.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using ChakraProtoMsg::Node;

LoadedScenario cosmoflow(const std::string& parallelism, int mini_batch = 1) {
  return load_scenario_text(R"(
name: chakra
model: {zoo: cosmoflow, options: {width: 128}, mini_batch: )" +
                                std::to_string(mini_batch) + R"(}
parallelism: )" + parallelism + R"(
io: {format: hdf5}
platform: {preset: lassen}
)",
                            "chakra.yaml", "");
}

fs::path fresh_directory(const std::string& name) {
  const auto directory = fs::temp_directory_path() / ("tessera-chakra-" + name);
  fs::remove_all(directory);
  return directory;
}

std::int64_t integer(const Node& node, const std::string& name) {
  const auto* attribute = chakra::find_attribute(node, name);
  EXPECT_NE(attribute, nullptr) << node.name() << " has no " << name;
  return attribute ? attribute->int64_val() : -1;
}

struct Counts {
  std::size_t compute = 0, collectives = 0, memory = 0, stage_sends = 0, stage_receives = 0,
              halo_copies = 0;
  bool operator==(const Counts&) const = default;
};

// What a program's ops should become on `rank` (halo messages are counted per neighbour
// separately; a halo op becomes a compute node for its packing or unpacking where the rank
// spends time on it).
Counts expected_counts(const StepProgram& program, const RankNumbering& numbering, int rank) {
  Counts counts;
  for (const auto& op : program.ops) {
    switch (op.kind) {
      case StepOpKind::halo_start:
      case StepOpKind::halo_wait:
        if (halo_copy_seconds(op, numbering.neighbour(rank, op.axis, -1) >= 0,
                              numbering.neighbour(rank, op.axis, +1) >= 0) > 0) {
          ++counts.halo_copies;
        }
        break;
      case StepOpKind::compute:
      case StepOpKind::update:
        ++counts.compute;
        break;
      case StepOpKind::group_allreduce:
      case StepOpKind::group_alltoall:
      case StepOpKind::group_allgather:
      case StepOpKind::gradient_allreduce:
      case StepOpKind::gradient_reduce_scatter:
        ++counts.collectives;
        break;
      case StepOpKind::read_start:
      case StepOpKind::offload_start:
      case StepOpKind::prefetch_start:
        ++counts.memory;
        break;
      case StepOpKind::stage_send:
        ++counts.stage_sends;
        break;
      case StepOpKind::stage_recv:
        ++counts.stage_receives;
        break;
      default:
        break;
    }
  }
  return counts;
}

// Exports the scenario's first point and checks every file; returns the first program's counts.
Counts check_point(const LoadedScenario& loaded, const std::string& name) {
  const auto& point = loaded.points.front();
  const auto programs = point_programs(loaded, point, nullptr).programs;
  const auto directory = fresh_directory(name);
  const auto summary = chakra::export_chakra(programs, point.config, directory.string(), "point");
  const int gpus = static_cast<int>(point.config.gpus());
  EXPECT_EQ(summary.files, gpus);
  EXPECT_TRUE(fs::exists(directory / "comm_groups.json"));

  // (source, destination, tag) -> size, for sends and receives over all files.
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::int64_t> sends, receives;
  const RankNumbering numbering(point.config);
  for (int rank = 0; rank < gpus; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const auto trace =
        chakra::read_chakra_trace((directory / ("point." + std::to_string(rank) + ".et")).string());
    EXPECT_EQ(trace.metadata.version(), "0.0.4");
    const int stage = numbering.stage_of(rank);
    const StepProgram* program = &programs.front();
    for (const auto& p : programs) program = p.stage == stage ? &p : program;

    Counts counts;
    std::optional<std::uint64_t> last_compute;
    for (std::size_t i = 0; i < trace.nodes.size(); ++i) {
      const auto& node = trace.nodes[i];
      EXPECT_EQ(node.id(), i);
      for (auto dep : node.ctrl_deps()) EXPECT_LT(dep, node.id()) << node.name();
      for (auto dep : node.data_deps()) EXPECT_LT(dep, node.id()) << node.name();
      switch (node.type()) {
        case ChakraProtoMsg::COMP_NODE:
          if (node.name().ends_with("(pack)") || node.name().ends_with("(unpack)")) {
            EXPECT_NE(node.name().find("halo"), std::string::npos) << node.name();
            ++counts.halo_copies;
          } else if (node.name() != "end of step") {
            ++counts.compute;
          }
          // The compute stream is a chain: each compute node follows the stream's last node,
          // which is at or after the previous compute node.
          if (last_compute) {
            EXPECT_EQ(node.ctrl_deps_size(), 1) << node.name();
            if (node.ctrl_deps_size() > 0) {
              EXPECT_GE(node.ctrl_deps(0), *last_compute);
            }
          }
          last_compute = node.id();
          break;
        case ChakraProtoMsg::COMM_COLL_NODE:
          ++counts.collectives;
          EXPECT_GE(integer(node, "comm_size"), 0);
          EXPECT_NE(chakra::find_attribute(node, "pg_name"), nullptr);
          break;
        case ChakraProtoMsg::MEM_LOAD_NODE:
        case ChakraProtoMsg::MEM_STORE_NODE:
          ++counts.memory;
          EXPECT_GT(integer(node, "tensor_size"), 0);
          break;
        case ChakraProtoMsg::COMM_SEND_NODE:
        case ChakraProtoMsg::COMM_RECV_NODE: {
          const bool send = node.type() == ChakraProtoMsg::COMM_SEND_NODE;
          const auto key = std::make_tuple(integer(node, "comm_src"), integer(node, "comm_dst"),
                                           integer(node, "comm_tag"));
          EXPECT_EQ(send ? std::get<0>(key) : std::get<1>(key), rank);
          auto& into = send ? sends : receives;
          EXPECT_EQ(into.count(key), 0u) << "two messages with one tag: " << node.name();
          into[key] = integer(node, "comm_size");
          if (node.name().find("halo") == std::string::npos) {
            ++(send ? counts.stage_sends : counts.stage_receives);
          }
          break;
        }
        default:
          ADD_FAILURE() << "unexpected node type " << node.type();
      }
    }
    EXPECT_EQ(counts, expected_counts(*program, numbering, rank));
  }
  EXPECT_EQ(sends, receives);  // every message sent is received, with its size
  return expected_counts(programs.front(), numbering, 0);
}

TEST(ChakraExport, ASpatialSplitWithReadsReadsBack) {
  const auto loaded = cosmoflow("{data: 2, spatial: {grid: [2, 2, 1], until: pool3}}");
  const auto counts = check_point(loaded, "spatial");
  EXPECT_GT(counts.compute, 0u);
  EXPECT_GT(counts.collectives, 1u);  // the redistribution and the gradient buckets
  EXPECT_EQ(counts.memory, 1u);       // the next sample's read
  EXPECT_GT(counts.halo_copies, 0u);  // faces packed and unpacked
}

TEST(ChakraExport, TensorGroupsAndShardedWeightsReadBack) {
  auto loaded = cosmoflow("{data: 2, tensor: 2}");
  loaded.scenario.memory.shard = ShardLevel::weights;
  const auto counts = check_point(loaded, "tensor");
  EXPECT_GT(counts.collectives, 2u);  // partial sums, gathered weights, reduce-scattered buckets
  std::ifstream groups(fs::temp_directory_path() / "tessera-chakra-tensor" / "comm_groups.json");
  const std::string text((std::istreambuf_iterator<char>(groups)), {});
  EXPECT_NE(text.find("tensor.0"), std::string::npos) << text;
  EXPECT_NE(text.find("stage.0.shard1"), std::string::npos) << text;
}

TEST(ChakraExport, ModelParallelStagesAndOffloadingReadBack) {
  auto loaded =
      cosmoflow("{data: 2, spatial: {grid: [2, 1, 1], until: pool3}, model: {degree: 2}}");
  loaded.scenario.memory.offload = OffloadPolicy::conv;
  const auto counts = check_point(loaded, "stages");
  EXPECT_GT(counts.stage_sends, 0u);
  EXPECT_GT(counts.memory, 1u);  // the read and vDNN's copies
}

// Four micro-batches through two stages, one forward, one backward: each stage message has a tag
// of its own (tensor, direction, micro-batch), which its receive on the peer carries too
// (check_point). Sends do not block and the step's last node waits for them; a receive blocks the
// stream.
TEST(ChakraExport, APipelinePairsStageMessagesByTagAndWaitsForItsSendsAtTheEnd) {
  const auto loaded =
      cosmoflow("{data: 2, model: {degree: 2, micro_batches: 4, schedule: 1f1b}}", 4);
  const auto counts = check_point(loaded, "pipeline");
  EXPECT_GE(counts.stage_sends, 4u);
  EXPECT_GE(counts.stage_receives, 4u);

  const auto& point = loaded.points.front();
  const auto programs = point_programs(loaded, point, nullptr).programs;
  for (const auto& program : programs) {
    SCOPED_TRACE("stage " + std::to_string(program.stage));
    std::vector<chakra::CommGroup> groups;
    const auto nodes = chakra::trace_of_rank(program, point.config, program.stage, groups);
    std::set<std::uint64_t> sends;
    std::set<std::int64_t> tags;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const auto& node = nodes[i];
      if (node.name().find("halo") != std::string::npos) continue;
      if (node.type() == ChakraProtoMsg::COMM_SEND_NODE) {
        sends.insert(node.id());
        tags.insert(integer(node, "comm_tag"));
      } else if (node.type() == ChakraProtoMsg::COMM_RECV_NODE) {
        tags.insert(integer(node, "comm_tag"));
        ASSERT_LT(i + 1, nodes.size());
        ASSERT_GT(nodes[i + 1].ctrl_deps_size(), 0);
        EXPECT_EQ(nodes[i + 1].ctrl_deps(0), node.id()) << "a receive blocks the stream";
      }
    }
    ASSERT_FALSE(sends.empty());
    EXPECT_EQ(tags.size() % 4, 0u) << "each tensor once per micro-batch";
    for (const auto& node : nodes) {
      for (auto dep : node.ctrl_deps()) EXPECT_FALSE(sends.count(dep)) << "a send blocked";
    }
    const auto& end = nodes.back();
    EXPECT_EQ(end.name(), "end of step");
    const std::set<std::uint64_t> waited(end.data_deps().begin(), end.data_deps().end());
    for (auto id : sends) EXPECT_TRUE(waited.count(id)) << "send " << id << " not waited for";
  }
}

TEST(ChakraExport, WaitsBecomeDataDependencies) {
  const auto loaded = cosmoflow("{data: 1, spatial: {grid: [2, 1, 1], until: pool3}}");
  const auto programs = point_programs(loaded, loaded.points.front(), nullptr).programs;
  std::vector<chakra::CommGroup> groups;
  const auto nodes =
      chakra::trace_of_rank(programs.front(), loaded.points.front().config, 0, groups);
  // Rank 0 has an upper neighbour only: each exchange is one send and one receive, and the node
  // after the exchange's wait depends on both.
  std::map<std::uint64_t, const Node*> by_id;
  for (const auto& node : nodes) by_id[node.id()] = &node;
  std::size_t halo_messages = 0, waited = 0;
  for (const auto& node : nodes) {
    if (node.type() == ChakraProtoMsg::COMM_SEND_NODE ||
        node.type() == ChakraProtoMsg::COMM_RECV_NODE) {
      ++halo_messages;
      EXPECT_EQ(
          integer(node, node.type() == ChakraProtoMsg::COMM_SEND_NODE ? "comm_dst" : "comm_src"),
          1);
    }
    for (auto dep : node.data_deps()) {
      const auto type = by_id.at(dep)->type();
      waited += type == ChakraProtoMsg::COMM_SEND_NODE || type == ChakraProtoMsg::COMM_RECV_NODE;
    }
  }
  EXPECT_GT(halo_messages, 0u);
  EXPECT_EQ(waited, halo_messages);  // each message waited for exactly once
  ASSERT_EQ(groups.size(),
            2u);  // the spatial group (batch-norm free: the all-to-all) and the stage
}

// Rank 3's trace cannot be written (a folder has its temporary name): the export fails and
// leaves no trace of any rank, rather than ranks 0 to 2 of this export beside older ones.
TEST(ChakraExport, AFailedExportLeavesNoRankFile) {
  const auto loaded = cosmoflow("{data: 2, spatial: {grid: [2, 2, 1], until: pool3}}");
  const auto& point = loaded.points.front();
  const auto programs = point_programs(loaded, point, nullptr).programs;
  const auto directory = fresh_directory("failed");
  fs::create_directories(directory / "point.3.et.partial" / "occupied");
  EXPECT_THROW(chakra::export_chakra(programs, point.config, directory.string(), "point"),
               std::runtime_error);
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(directory)) {
    left.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(left, std::vector<std::string>{"point.3.et.partial"});
}

TEST(ChakraExport, AMalformedFileIsAnError) {
  const auto directory = fresh_directory("malformed");
  fs::create_directories(directory);
  const auto path = (directory / "bad.0.et").string();
  std::ofstream(path, std::ios::binary) << "\x05garbage-that-is-not-a-message";
  EXPECT_THROW(chakra::read_chakra_trace(path), std::runtime_error);
}

}  // namespace
}  // namespace tessera

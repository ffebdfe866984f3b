// Chakra execution traces of CosmoFlow points (chakra_export.hpp), read back with the schema:
// one file per GPU; per file as many compute, collective, send, receive and memory nodes as its
// stage's program has ops of those kinds; every dependency names an earlier node; the compute
// stream is one chain; what a wait waited for comes before the next op; every send has its
// receive on the peer, with the same tag and size (pipelined stages' too).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "tessera/chakra/chakra_export.hpp"
#include "tessera/core/point/point_programs.hpp"
#include "tessera/core/point/rank_programs.hpp"
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
  const auto summary = chakra::export_chakra(point_rank_programs(loaded, point, nullptr),
                                             point.config, directory.string(), "point");
  const int gpus = static_cast<int>(point.config.gpus());
  EXPECT_EQ(summary.files, gpus);
  EXPECT_TRUE(fs::exists(directory / "comm_groups.json"));

  // (source, destination, tag) -> size, for sends and receives over all files.
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::int64_t> sends, receives;
  std::size_t memory_nodes = 0;
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
    memory_nodes += counts.memory;
  }
  EXPECT_EQ(summary.memory_nodes, memory_nodes);
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

// Groups are numbered (ASTRA-sim reads pg_name as comm_groups.json's key) and keep their names
// in tessera_group; every member of a collective's group has the collective in its trace.
TEST(ChakraExport, TensorGroupsAndShardedWeightsReadBack) {
  auto loaded = cosmoflow("{data: 2, tensor: 2}");
  loaded.scenario.memory.shard = ShardLevel::weights;
  const auto counts = check_point(loaded, "tensor");
  EXPECT_GT(counts.collectives, 2u);  // partial sums, gathered weights, reduce-scattered buckets
  const auto directory = fs::temp_directory_path() / "tessera-chakra-tensor";
  std::ifstream file(directory / "comm_groups.json");
  const auto groups = nlohmann::json::parse(file);
  std::map<std::string, std::string> name_of_id;
  for (int rank = 0; rank < 4; ++rank) {
    const auto trace =
        chakra::read_chakra_trace((directory / ("point." + std::to_string(rank) + ".et")).string());
    for (const auto& node : trace.nodes) {
      if (node.type() != ChakraProtoMsg::COMM_COLL_NODE) continue;
      const auto id = chakra::find_attribute(node, "pg_name")->string_val();
      const auto name = chakra::find_attribute(node, "tessera_group")->string_val();
      ASSERT_TRUE(groups.contains(id)) << id << " not in " << groups.dump();
      EXPECT_GT(std::stoi(id), 0);
      const auto ranks = groups[id].get<std::vector<int>>();
      EXPECT_NE(std::find(ranks.begin(), ranks.end(), rank), ranks.end()) << name;
      const auto [it, inserted] = name_of_id.emplace(id, name);
      EXPECT_EQ(it->second, name) << "one id, one group";
    }
  }
  std::set<std::string> names;
  for (const auto& [id, name] : name_of_id) names.insert(name);
  EXPECT_EQ(names.size(), name_of_id.size()) << "one group, one id";
  EXPECT_TRUE(names.count("tensor.0"));
  EXPECT_TRUE(names.count("stage.0.shard1"));
}

// Sizes as ASTRA-sim reads them: an all-gather's is one member's share of the gathered tensor,
// an all-to-all's a member's whole buffer (a part for every member, itself included).
TEST(ChakraExport, CollectiveSizesAreChakrasPerMemberSizes) {
  auto gathered = cosmoflow("{data: 4}");
  gathered.scenario.memory.shard = ShardLevel::weights;
  auto redistributed = cosmoflow("{data: 1, spatial: {grid: [2, 2, 1], until: pool3}}");
  for (const auto* loaded : {&gathered, &redistributed}) {
    const auto& point = loaded->points.front();
    const auto program = point_programs(*loaded, point, nullptr).programs.front();
    std::vector<chakra::CommGroup> groups;
    const auto nodes = chakra::trace_of_rank(program, point.config, 0, groups);
    std::vector<double> expected, exported;
    for (const auto& op : program.ops) {
      if (op.kind == StepOpKind::group_allgather) expected.push_back(op.bytes / 4);
      if (op.kind == StepOpKind::group_alltoall) expected.push_back(op.bytes * 4);
    }
    for (const auto& node : nodes) {
      const auto* type = chakra::find_attribute(node, "comm_type");
      if (!type || (type->int64_val() != ChakraProtoMsg::ALL_GATHER &&
                    type->int64_val() != ChakraProtoMsg::ALL_TO_ALL)) {
        continue;
      }
      exported.push_back(static_cast<double>(integer(node, "comm_size")));
    }
    ASSERT_FALSE(expected.empty());
    ASSERT_EQ(exported.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      EXPECT_NEAR(exported[i], expected[i], 1.0) << i;
    }
  }
}

// A straggler's compute is stretched by its clock, as the simulator plays it; whole microseconds
// add up to the compute stream's exact time, however many short kernels it has.
TEST(ChakraExport, AStragglersComputeIsStretchedAndMicrosecondsAddUp) {
  auto loaded = cosmoflow("{data: 4}");
  loaded.cluster.stragglers.push_back(
      {.kind = StragglerKind::gpu_clock, .index = 2, .fraction = 0.5});
  const auto& point = loaded.points.front();
  const auto directory = fresh_directory("straggler");
  chakra::export_chakra(point_rank_programs(loaded, point, nullptr), point.config,
                        directory.string(), "point");
  std::vector<double> exact(4, 0), micros(4, 0);
  for (int rank = 0; rank < 4; ++rank) {
    const auto trace =
        chakra::read_chakra_trace((directory / ("point." + std::to_string(rank) + ".et")).string());
    for (const auto& node : trace.nodes) {
      if (node.type() != ChakraProtoMsg::COMP_NODE) continue;
      micros[rank] += static_cast<double>(node.duration_micros());
      if (const auto* seconds = chakra::find_attribute(node, "tessera_seconds")) {
        exact[rank] += seconds->double_val();
      }
    }
    EXPECT_NEAR(micros[rank], exact[rank] * 1e6, 0.5) << rank;
  }
  EXPECT_GT(exact[0], 0);
  EXPECT_NEAR(exact[2], 2 * exact[0], 1e-9 * exact[0]);
  EXPECT_DOUBLE_EQ(exact[1], exact[0]);
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

// On a mixed cluster each GPU's trace holds its own programs: the P100 nodes' GPUs, with
// proportional shares, their own batch timed on their own GPU, as the simulator plays them.
TEST(ChakraExport, AMixedClustersGpusEachExportTheirOwnPrograms) {
  const auto loaded =
      load_scenario(std::string(TESSERA_SOURCE_DIR) + "/scenarios/resnet18_v100_p100.yaml");
  const auto& point = loaded.points.back();  // 32 GPUs: V100 and P100 nodes
  const auto programs = point_rank_programs(loaded, point, nullptr);
  ASSERT_GT(programs.sets.size(), 1u);
  std::set<double> compute_seconds;
  for (int rank = 0; rank < static_cast<int>(point.config.gpus()); ++rank) {
    const auto& set = programs.sets.at(programs.set_of_rank.at(static_cast<std::size_t>(rank)));
    std::vector<chakra::CommGroup> groups;
    double seconds = 0;
    for (const auto& node : chakra::trace_of_rank(set.front(), point.config, rank, groups)) {
      if (node.type() == ChakraProtoMsg::COMP_NODE) {
        seconds += chakra::find_attribute(node, "tessera_seconds")->double_val();
      }
    }
    compute_seconds.insert(std::round(seconds * 1e6));
  }
  EXPECT_GT(compute_seconds.size(), 1u) << "every GPU exported the same compute";
}

// Each compute node carries its kernel's work (num_ops, tensor_size), which ASTRA-sim's roofline
// mode times it from: the program's FLOPs and bytes, in whole units.
TEST(ChakraExport, ComputeNodesCarryTheirWork) {
  const auto loaded = cosmoflow("{data: 2}");
  const auto& point = loaded.points.front();
  const auto program = point_programs(loaded, point, nullptr).programs.front();
  std::vector<chakra::CommGroup> groups;
  const auto nodes = chakra::trace_of_rank(program, point.config, 0, groups);
  double program_flops = 0, exported_flops = 0;
  for (const auto& op : program.ops) {
    if (op.kind == StepOpKind::compute || op.kind == StepOpKind::update) {
      program_flops += std::max(std::round(op.flops), 1.0);  // a copy counts one operation
      EXPECT_TRUE(op.seconds == 0 || op.memory_bytes > 0) << op.label;
    }
  }
  std::size_t convolutions = 0;
  for (const auto& node : nodes) {
    if (node.type() != ChakraProtoMsg::COMP_NODE || node.name() == "end of step") continue;
    exported_flops += static_cast<double>(integer(node, "num_ops"));
    EXPECT_GE(integer(node, "tensor_size"), 1) << node.name();
    if (node.name() == "conv1 forward") {
      ++convolutions;
      EXPECT_GT(integer(node, "num_ops"), 1'000'000'000) << "CosmoFlow-128's conv1: GFLOPs";
      EXPECT_GT(integer(node, "tensor_size"), 0);
    }
  }
  EXPECT_EQ(convolutions, 1u);
  EXPECT_GT(program_flops, 0);
  EXPECT_DOUBLE_EQ(exported_flops, program_flops);
}

// Rank 3's trace cannot be written (a folder has its temporary name): the export fails and
// leaves no trace of any rank, rather than ranks 0 to 2 of this export beside older ones.
TEST(ChakraExport, AFailedExportLeavesNoRankFile) {
  const auto loaded = cosmoflow("{data: 2, spatial: {grid: [2, 2, 1], until: pool3}}");
  const auto& point = loaded.points.front();
  const auto directory = fresh_directory("failed");
  fs::create_directories(directory / "point.3.et.partial" / "occupied");
  EXPECT_THROW(chakra::export_chakra(point_rank_programs(loaded, point, nullptr), point.config,
                                     directory.string(), "point"),
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

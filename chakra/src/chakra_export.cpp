#include "tessera/chakra/chakra_export.hpp"

#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/util/delimited_message_util.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "tessera/core/common/atomic_file.hpp"
#include "tessera/core/strategy/halo_copies.hpp"
#include "tessera/core/strategy/rank_numbering.hpp"

namespace tessera::chakra {
namespace {

using ChakraProtoMsg::Node;

constexpr const char* kFormatVersion = "0.0.4";
// Send and receive nodes pair up by (source, destination, tag): halo messages by exchange and
// direction, stage transfers above them by tensor, direction and micro-batch.
constexpr std::int64_t kStageTagBase = std::int64_t{1} << 20;
constexpr std::int64_t kMicroBatchTags = std::int64_t{1} << 16;

// Where a rank sits (rank_numbering.hpp, as both backends number ranks), with its groups named.
class Layout {
 public:
  Layout(const ParallelConfig& config, int rank)
      : numbering_(config), rank_(rank), parts_(static_cast<int>(config.spatial_parts())) {}

  int parts() const { return parts_; }
  int neighbour(int axis, int step) const { return numbering_.neighbour(rank_, axis, step); }
  int peer_in_stage(int stage) const { return numbering_.peer_in_stage(rank_, stage); }
  CommGroup spatial_group() const {
    return {"spatial." + std::to_string(numbering_.replica_of(rank_)) + "." +
                std::to_string(numbering_.stage_of(rank_)) + shard_suffix(),
            numbering_.spatial_group(rank_)};
  }
  CommGroup stage_group(int stage) const {
    return {"stage." + std::to_string(stage) + shard_suffix(),
            numbering_.stage_group(stage, numbering_.tensor_index_of(rank_))};
  }
  CommGroup table_group(std::size_t layer, const std::vector<int>& stages) const {
    std::string name = "table." + std::to_string(layer) + "." +
                       std::to_string(numbering_.replica_of(rank_)) + "." +
                       std::to_string(numbering_.spatial_index_of(rank_));
    for (int stage : stages) name += "." + std::to_string(stage);
    return {name + shard_suffix(), numbering_.table_group(rank_, stages)};
  }
  CommGroup tensor_group() const {
    return {"tensor." + std::to_string(rank_ - numbering_.tensor_index_of(rank_)),
            numbering_.tensor_group(rank_)};
  }

 private:
  // Groups of different tensor shards hold different ranks: their names tell them apart.
  std::string shard_suffix() const {
    return numbering_.tensor_group(rank_).size() > 1
               ? ".shard" + std::to_string(numbering_.tensor_index_of(rank_))
               : "";
  }

  RankNumbering numbering_;
  int rank_;
  int parts_;
};

void add_attribute(Node& node, const std::string& name, std::int64_t value) {
  auto* attribute = node.add_attr();
  attribute->set_name(name);
  attribute->set_int64_val(value);
}
void add_attribute(Node& node, const std::string& name, const std::string& value) {
  auto* attribute = node.add_attr();
  attribute->set_name(name);
  attribute->set_string_val(value);
}
void add_attribute(Node& node, const std::string& name, double value) {
  auto* attribute = node.add_attr();
  attribute->set_name(name);
  attribute->set_double_val(value);
}
void add_flag(Node& node, const std::string& name, bool value) {
  auto* attribute = node.add_attr();
  attribute->set_name(name);
  attribute->set_bool_val(value);
}

// Builds one GPU's nodes in program order, tracking what each new node must wait for.
class TraceBuilder {
 public:
  TraceBuilder(const ParallelConfig& config, int rank, double compute_stretch,
               std::vector<CommGroup>& groups)
      : layout_(config, rank), rank_(rank), compute_stretch_(compute_stretch), groups_(groups) {}

  void add(const StepOp& op, const StepProgram& program) {
    switch (op.kind) {
      case StepOpKind::allocate:
      case StepOpKind::release:
        return;  // bookkeeping, no time
      case StepOpKind::compute:
      case StepOpKind::update: {
        timed(issue(op, ChakraProtoMsg::COMP_NODE, true), op.seconds, op.provenance, op.flops,
              op.memory_bytes);
        return;
      }
      case StepOpKind::halo_start:
        halo_copy(op);
        for (int step : {-1, +1}) {
          const int peer = layout_.neighbour(op.axis, step);
          if (peer < 0) continue;
          // A message to the lower neighbour flows down (tag even), to the upper one up (odd);
          // what arrives from the lower neighbour flowed up.
          const double outgoing = step < 0 ? op.bytes_to_lower : op.bytes_to_upper;
          const double incoming = step < 0 ? op.bytes_to_upper : op.bytes_to_lower;
          if (outgoing > 0) {
            halos_[op.exchange].push_back(
                point_to_point(op, ChakraProtoMsg::COMM_SEND_NODE, rank_, peer, outgoing,
                               2 * op.exchange + (step < 0 ? 0 : 1), false));
          }
          if (incoming > 0) {
            halos_[op.exchange].push_back(
                point_to_point(op, ChakraProtoMsg::COMM_RECV_NODE, peer, rank_, incoming,
                               2 * op.exchange + (step < 0 ? 1 : 0), false));
          }
        }
        return;
      case StepOpKind::halo_wait:
        wait_for(halos_[op.exchange]);
        halos_.erase(op.exchange);
        halo_copy(op);
        return;
      case StepOpKind::group_allreduce:
        collective(op, ChakraProtoMsg::ALL_REDUCE, op.bytes, group_of(op, program), true);
        return;
      case StepOpKind::group_allgather: {
        // Chakra's all-gather size is one member's share; the program's, the gathered whole.
        const auto group = group_of(op, program);
        collective(op, ChakraProtoMsg::ALL_GATHER,
                   op.bytes / static_cast<double>(std::max<std::size_t>(group.ranks.size(), 1)),
                   group, true);
        return;
      }
      case StepOpKind::group_alltoall: {
        // Chakra's all-to-all size is a member's whole buffer, a part of it for every member
        // (itself included); the program's, the part for one peer.
        auto& node = collective(op, ChakraProtoMsg::ALL_TO_ALL, op.bytes * layout_.parts(),
                                layout_.spatial_group(), true);
        add_attribute(node, "tessera_bytes_per_peer", op.bytes);
        return;
      }
      case StepOpKind::stage_send:
      case StepOpKind::stage_recv: {
        // A send leaves at once and is waited for at the step's end; a receive blocks. Messages
        // pair up by tensor, direction and micro-batch, as the simulator pairs them.
        const bool send = op.kind == StepOpKind::stage_send;
        const int peer = layout_.peer_in_stage(op.peer_stage);
        const auto tag = kStageTagBase +
                         (static_cast<std::int64_t>(op.layer) * 2 +
                          (op.direction == Direction::forward ? 0 : 1)) *
                             kMicroBatchTags +
                         op.micro_batch % kMicroBatchTags;
        const auto id = point_to_point(
            op, send ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE,
            send ? rank_ : peer, send ? peer : rank_, op.bytes, tag, !send);
        if (send) stage_sends_.push_back(id);
        return;
      }
      case StepOpKind::gradient_allreduce:
      case StepOpKind::gradient_reduce_scatter: {
        // Issued where backward reaches it, reduced after the bucket before it.
        auto& node =
            collective(op,
                       op.kind == StepOpKind::gradient_allreduce ? ChakraProtoMsg::ALL_REDUCE
                                                                 : ChakraProtoMsg::REDUCE_SCATTER,
                       op.bytes, layout_.stage_group(program.stage), false);
        if (last_bucket_) node.add_ctrl_deps(*last_bucket_);
        last_bucket_ = node.id();
        buckets_.push_back(node.id());
        return;
      }
      case StepOpKind::gradient_wait: {
        // Every queued bucket, or (staged gradients) those up to op.bucket: the buckets not yet
        // waited for are the last ones queued, indices waited_buckets_ on.
        const auto until = op.bucket >= 0 ? static_cast<std::size_t>(op.bucket) + 1
                                          : waited_buckets_ + buckets_.size();
        const auto waited = static_cast<std::ptrdiff_t>(until - waited_buckets_);
        wait_for({buckets_.begin(), buckets_.begin() + waited});
        buckets_.erase(buckets_.begin(), buckets_.begin() + waited);
        waited_buckets_ = until;
        return;
      }
      case StepOpKind::read_start:
      case StepOpKind::prefetch_start:
      case StepOpKind::offload_start: {
        const bool store = op.kind == StepOpKind::offload_start;
        auto& node = issue(
            op, store ? ChakraProtoMsg::MEM_STORE_NODE : ChakraProtoMsg::MEM_LOAD_NODE, false);
        add_attribute(node, "tensor_size", static_cast<std::int64_t>(op.bytes));
        if (op.kind == StepOpKind::read_start) {
          add_attribute(node, "tessera_source", to_string(op.source));
          reads_.push_back(node.id());
        } else {
          copies_.push_back(node.id());
        }
        return;
      }
      case StepOpKind::read_wait:
        wait_for(reads_);
        reads_.clear();
        return;
      case StepOpKind::offload_wait:
      case StepOpKind::prefetch_wait:
        wait_for(copies_);
        copies_.clear();
        return;
    }
  }

  // The step ends when its stage sends have arrived; a program ending in a wait, or with sends in
  // flight, gets a last, empty compute node holding them.
  std::vector<Node> finish() {
    wait_for(stage_sends_);
    if (!waited_.empty()) {
      StepOp end;
      end.label = "end of step";
      timed(issue(end, ChakraProtoMsg::COMP_NODE, true), 0, Provenance::none);
    }
    return std::move(nodes_);
  }

 private:
  // A compute node's time on this GPU (a straggler's stretched). Chakra counts whole
  // microseconds: each node gets what brings the stream's rounded total to the exact one, so
  // that many short kernels do not lose their fractions (ASTRA-sim replays duration_micros).
  // Its work (num_ops, tensor_size) is what ASTRA-sim's roofline mode times it from instead
  // (num_ops over the roofline's rate at num_ops / tensor_size). Every node counts at least one
  // operation and one byte: a copy without arithmetic then takes its bytes over the memory
  // bandwidth, and an empty node next to nothing, where zeros would stall that mode (it skips
  // a node of no bytes without issuing the nodes after it).
  void timed(Node& node, double seconds, Provenance provenance, double flops = 0,
             double bytes = 0) {
    add_attribute(node, "num_ops", std::max<std::int64_t>(std::llround(flops), 1));
    add_attribute(node, "tensor_size", std::max<std::int64_t>(std::llround(bytes), 1));
    seconds *= compute_stretch_;
    exact_seconds_ += seconds;
    const auto total = static_cast<std::uint64_t>(std::llround(exact_seconds_ * 1e6));
    node.set_duration_micros(total - exported_micros_);
    exported_micros_ = total;
    add_attribute(node, "tessera_seconds", seconds);
    add_attribute(node, "tessera_provenance", to_string(provenance));
  }

  // This GPU's packing (before the sends) or unpacking (after the receives) of a halo exchange's
  // faces, on the compute stream (halo_copies.hpp).
  void halo_copy(const StepOp& op) {
    const bool lower = layout_.neighbour(op.axis, -1) >= 0;
    const bool upper = layout_.neighbour(op.axis, +1) >= 0;
    const double seconds = halo_copy_seconds(op, lower, upper);
    if (seconds <= 0) return;
    auto& node = issue(op, ChakraProtoMsg::COMP_NODE, true);
    node.set_name(op.label + (op.kind == StepOpKind::halo_start ? " (pack)" : " (unpack)"));
    // Each face read and written once (a window layer's whole-shard copy is not counted).
    timed(node, seconds, op.provenance, 0, 2 * halo_face_bytes(op, lower, upper));
  }

  // A new node, after the compute stream's last node and whatever was waited for since; a
  // blocking node becomes the compute stream's last.
  Node& issue(const StepOp& op, ChakraProtoMsg::NodeType type, bool blocking) {
    Node& node = nodes_.emplace_back();
    node.set_id(nodes_.size() - 1);
    node.set_name(op.label);
    node.set_type(type);
    if (stream_) node.add_ctrl_deps(*stream_);
    for (auto id : waited_) node.add_data_deps(id);
    add_flag(node, "is_cpu_op", false);
    add_attribute(node, "tessera_op", to_string(op.kind));
    if (blocking) {
      stream_ = node.id();
      waited_.clear();
    }
    return node;
  }

  std::uint64_t point_to_point(const StepOp& op, ChakraProtoMsg::NodeType type, int source,
                               int destination, double bytes, std::int64_t tag, bool blocking) {
    auto& node = issue(op, type, blocking);
    add_attribute(node, "comm_src", static_cast<std::int64_t>(source));
    add_attribute(node, "comm_dst", static_cast<std::int64_t>(destination));
    add_attribute(node, "comm_tag", tag);
    add_attribute(node, "comm_size", static_cast<std::int64_t>(bytes));
    return node.id();
  }

  Node& collective(const StepOp& op, ChakraProtoMsg::CollectiveCommType kind, double bytes,
                   const CommGroup& group, bool blocking) {
    auto& node = issue(op, ChakraProtoMsg::COMM_COLL_NODE, blocking);
    add_attribute(node, "comm_type", static_cast<std::int64_t>(kind));
    add_attribute(node, "comm_size", static_cast<std::int64_t>(bytes));
    // ASTRA-sim reads pg_name as a number (comm_groups.json's key); the name rides beside it.
    auto known = std::find_if(groups_.begin(), groups_.end(),
                              [&](const CommGroup& g) { return g.name == group.name; });
    if (known == groups_.end()) {
      groups_.push_back(group);
      groups_.back().id = static_cast<int>(groups_.size());
      known = groups_.end() - 1;
    }
    add_attribute(node, "pg_name", std::to_string(known->id));
    add_attribute(node, "tessera_group", group.name);
    return node;
  }

  void wait_for(const std::vector<std::uint64_t>& ids) {
    waited_.insert(waited_.end(), ids.begin(), ids.end());
  }

  Layout layout_;
  int rank_;
  double compute_stretch_;
  double exact_seconds_ = 0;           // the compute stream's time so far
  std::uint64_t exported_micros_ = 0;  // the same, as its nodes' whole microseconds add up
  CommGroup group_of(const StepOp& op, const StepProgram& program) const {
    switch (op.group) {
      case CollectiveGroup::stage:
        return layout_.stage_group(program.stage);
      case CollectiveGroup::tensor:
        return layout_.tensor_group();
      case CollectiveGroup::table:
        return layout_.table_group(op.layer, program.table_stages.at(op.layer));
      case CollectiveGroup::spatial:
        break;
    }
    return layout_.spatial_group();
  }

  std::vector<CommGroup>& groups_;
  std::vector<Node> nodes_;
  std::optional<std::uint64_t> stream_;  // the compute stream's last node
  std::vector<std::uint64_t> waited_;    // async nodes waited for since
  std::map<int, std::vector<std::uint64_t>> halos_;
  std::vector<std::uint64_t> buckets_, reads_, copies_;
  std::optional<std::uint64_t> last_bucket_;
  std::size_t waited_buckets_ = 0;  // gradient buckets waited for so far
  std::vector<std::uint64_t> stage_sends_;
};

// Files written under a temporary name and given their own names together by commit(): a failed
// export (a full disk at rank 700) leaves the folder as it was, not a mix of two exports' ranks.
class StagedFiles {
 public:
  StagedFiles() = default;
  StagedFiles(const StagedFiles&) = delete;
  StagedFiles& operator=(const StagedFiles&) = delete;
  ~StagedFiles() {
    for (const auto& [staged, final_path] : files_) {
      std::error_code ignored;
      std::filesystem::remove(staged, ignored);
    }
  }
  // The temporary name to write `path`'s content under.
  std::string stage(const std::string& path) {
    files_.emplace_back(path + ".partial", path);
    return files_.back().first;
  }
  void commit() {
    while (!files_.empty()) {
      std::filesystem::rename(files_.back().first, files_.back().second);
      files_.pop_back();
    }
  }

 private:
  std::vector<std::pair<std::string, std::string>> files_;
};

}  // namespace

std::vector<Node> trace_of_rank(const StepProgram& program, const ParallelConfig& config, int rank,
                                std::vector<CommGroup>& groups, double compute_stretch) {
  TraceBuilder builder(config, rank, compute_stretch, groups);
  for (const auto& op : program.ops) builder.add(op, program);
  return builder.finish();
}

ExportSummary export_chakra(const RankPrograms& programs, const ParallelConfig& config,
                            const std::string& directory, const std::string& prefix) {
  std::filesystem::create_directories(directory);
  ExportSummary summary;
  StagedFiles staged;
  std::vector<CommGroup> groups;
  const RankNumbering numbering(config);
  for (int rank = 0; rank < static_cast<int>(config.gpus()); ++rank) {
    const auto r = static_cast<std::size_t>(rank);
    const auto& set =
        programs.sets.at(programs.set_of_rank.empty() ? 0 : programs.set_of_rank.at(r));
    const int stage = numbering.stage_of(rank);
    const auto program = std::find_if(set.begin(), set.end(),
                                      [&](const StepProgram& p) { return p.stage == stage; });
    if (program == set.end()) {
      throw std::logic_error("no program of stage " + std::to_string(stage) + " for rank " +
                             std::to_string(rank));
    }
    const double stretch = programs.stretch_of_rank.empty() ? 1.0 : programs.stretch_of_rank.at(r);
    const auto nodes = trace_of_rank(*program, config, rank, groups, stretch);
    const auto path =
        (std::filesystem::path(directory) / (prefix + "." + std::to_string(rank) + ".et")).string();
    std::ofstream out(staged.stage(path), std::ios::binary | std::ios::trunc);
    ChakraProtoMsg::GlobalMetadata metadata;
    metadata.set_version(kFormatVersion);
    auto* attribute = metadata.add_attr();
    attribute->set_name("tessera_rank");
    attribute->set_int64_val(rank);
    bool ok = static_cast<bool>(out) &&
              google::protobuf::util::SerializeDelimitedToOstream(metadata, &out);
    for (const auto& node : nodes) {
      ok = ok && google::protobuf::util::SerializeDelimitedToOstream(node, &out);
    }
    out.close();
    if (!ok || !out) throw std::runtime_error("cannot write the Chakra trace " + path);
    ++summary.files;
    summary.nodes += nodes.size();
    summary.memory_nodes +=
        static_cast<std::size_t>(std::count_if(nodes.begin(), nodes.end(), [](const Node& node) {
          return node.type() == ChakraProtoMsg::MEM_LOAD_NODE ||
                 node.type() == ChakraProtoMsg::MEM_STORE_NODE;
        }));
  }
  staged.commit();
  nlohmann::json json = nlohmann::json::object();
  for (const auto& group : groups) json[std::to_string(group.id)] = group.ranks;
  summary.comm_groups_path = (std::filesystem::path(directory) / "comm_groups.json").string();
  write_file_atomically(summary.comm_groups_path, json.dump(1) + "\n");
  return summary;
}

ChakraTrace read_chakra_trace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open the Chakra trace " + path);
  google::protobuf::io::IstreamInputStream stream(&in);
  ChakraTrace trace;
  bool clean_end = false;
  if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&trace.metadata, &stream,
                                                                &clean_end)) {
    throw std::runtime_error(path + ": no Chakra metadata message");
  }
  for (;;) {
    Node node;
    if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&node, &stream, &clean_end)) {
      if (clean_end) break;
      throw std::runtime_error(path + ": malformed node after " +
                               std::to_string(trace.nodes.size()) + " nodes");
    }
    trace.nodes.push_back(std::move(node));
  }
  return trace;
}

const ChakraProtoMsg::AttributeProto* find_attribute(const Node& node, const std::string& name) {
  for (const auto& attribute : node.attr()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

}  // namespace tessera::chakra

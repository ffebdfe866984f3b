#pragma once
// Tessera's step programs as MLCommons Chakra execution traces, one file per GPU, so that a
// strategy found here can be replayed in ASTRA-sim (chakra/proto/et_def.proto, format 0.0.4):
//  - compute and optimizer ops: COMP_NODE with the cost model's duration on that GPU (a straggler's
//    stretched by its clock; whole microseconds in duration_micros, rounded so that the compute
//    stream's total is exact; the exact seconds in the attribute tessera_seconds), its
//    provenance, and its work for ASTRA-sim's roofline mode (num_ops: FLOPs, tensor_size: bytes
//    read and written, each at least 1);
//  - halo exchanges: a COMM_SEND_NODE and a COMM_RECV_NODE per neighbour along the axis;
//    stage transfers: one send (asynchronous, waited for at the step's end) or receive
//    (blocking) with the peer stage's GPU, per tensor and micro-batch;
//  - batch-norm sums and gradient buckets: COMM_COLL_NODE ALL_REDUCE (comm_size: the buffer);
//    the redistribution: ALL_TO_ALL (comm_size: a member's whole buffer, a part per member);
//    gathered weights: ALL_GATHER (comm_size: one member's share), sharded gradients:
//    REDUCE_SCATTER (the whole buffer), as ASTRA-sim reads them; each names its group by a
//    number (pg_name, from 1) whose GPUs comm_groups.json lists (ASTRA-sim's
//    --comm-group-configuration), and by Tessera's name (tessera_group);
//  - sample reads and vDNN's copies: MEM_LOAD_NODE (host to device) and MEM_STORE_NODE (device to
//    host) with tensor_size in bytes;
//  - allocations and releases take no time and have no node.
// Dependencies follow the program: each node waits (ctrl_deps) for the compute-stream node
// before it; asynchronous ops (halos, buckets, reads, copies) start there and the op that waits
// for them takes them as data_deps; gradient buckets follow one another on the communication
// stream. GPU ranks are laid out as the simulator lays them out: rank = (replica x stages +
// stage) x spatial parts + spatial index, row-major over the grid.
#include <string>
#include <vector>

#include "et_def.pb.h"
#include "tessera/core/point/rank_programs.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"
#include "tessera/core/strategy/step_program.hpp"

namespace tessera::chakra {

// The GPUs of a collective: the nodes' pg_name is its id, tessera_group its name.
struct CommGroup {
  std::string name;  // "spatial.<replica>.<stage>", "stage.<stage>", "tensor.<first rank>"
                     // (".shard<t>" after a spatial or stage group of tensor shard t)
  std::vector<int> ranks;
  int id = 0;  // 1, 2, ... in the order the export first meets the groups
};

// The nodes of one GPU's trace: `program` is the program of the GPU's stage, its compute
// stretched by `compute_stretch` (a straggler's inverse clock fraction). Adds the groups it
// names to `groups` (once each, numbered in that order).
std::vector<ChakraProtoMsg::Node> trace_of_rank(const StepProgram& program,
                                                const ParallelConfig& config, int rank,
                                                std::vector<CommGroup>& groups,
                                                double compute_stretch = 1.0);

struct ExportSummary {
  int files = 0;
  std::size_t nodes = 0;
  std::size_t memory_nodes = 0;  // MEM_LOAD_NODE and MEM_STORE_NODE (reads, vDNN's copies)
  std::string comm_groups_path;
};

// Writes <directory>/<prefix>.<rank>.et for every GPU of the point, each with its own programs
// (point_rank_programs: a node group's GPU, a proportional batch share, a straggler's clock),
// and <directory>/comm_groups.json ({"<pg_name>": [ranks]}). Throws std::runtime_error naming
// the file that cannot be written.
ExportSummary export_chakra(const RankPrograms& programs, const ParallelConfig& config,
                            const std::string& directory, const std::string& prefix);

// Reads a trace file back: its metadata and nodes. Throws std::runtime_error on a malformed file.
struct ChakraTrace {
  ChakraProtoMsg::GlobalMetadata metadata;
  std::vector<ChakraProtoMsg::Node> nodes;
};
ChakraTrace read_chakra_trace(const std::string& path);

// The value of a node's attribute, if it has one of that name and type.
const ChakraProtoMsg::AttributeProto* find_attribute(const ChakraProtoMsg::Node& node,
                                                     const std::string& name);

}  // namespace tessera::chakra

#pragma once
// Measured kernel times, written by `tessera profile` and read by the cost model. One CSV file per
// device and date (format `tessera-profile/1`):
//
//   # tessera-profile/1
//   # device: <name as the cluster file's gpu.model, or the CPU's model name>
//   # libraries: cuDNN 9.19.0, NCCL 2.28.9
//   # created_utc: 2026-11-21T12:00:00Z
//   # micro_batch_timing: alone
//   # caches: step_like
//   device,op,direction,shape,dtype,micro_batch,algorithm,time_s,workspace_bytes,ok
//
// `shape` is kernel_shape_key() of the layer shard, so the profiler and the simulator agree on
// what was measured; `micro_batch` is the batch one kernel call processed (the shard's N when
// undivided); `ok` says whether the algorithm ran. `micro_batch_timing` says how a convolution's
// micro-batch sizes below its batch were timed (MicroBatchTiming; files written before
// 2026-11-26 lack the line and were timed alone); `caches` what each timed run found in the
// caches (RunCaches; files written before 2026-12-04 lack the line).
//
// The loader checks every row as the scenario loader checks a scenario; anything else is an
// InputError naming file, line, column and the column's name:
//  - Lines starting with '#' are comments (the metadata above among them); a `# tessera-profile/N`
//    line must say 1. The first other line is the header, exactly; at least one row follows it
//    (a file without measurements matches nothing and is a mistake, not an empty profile).
//  - device, op, shape and algorithm are not empty and not quoted (fields are never quoted: a
//    quote would become part of the name); direction, dtype and ok come from their lists.
//  - The `device`, `micro_batch_timing` and `caches` lines each come once.
//  - micro_batch is an integer in [1, 2^24] (a scenario's largest mini_batch).
//  - time_s is a number of seconds in [0, 1e6]: a kernel call of more than 11 days is a corrupt
//    measurement, and an infinite or huge one would stop the simulation inside SimGrid.
//  - workspace_bytes is a whole number of bytes in [0, 2^53] (every such count is exact in a
//    double).
//  - A file holds one row per key (device, op, direction, shape, dtype, micro_batch, algorithm):
//    `tessera profile` writes one median per algorithm and micro-batch and never measures a key it
//    has again, so a second row is a merge or an edit gone wrong, and which one to believe is not
//    the loader's guess to make: the error names both lines.
//  - Across files (`--profiles a.csv b.csv`) a later file's row replaces an earlier one's for the
//    same key, as later options override earlier ones: every profile of one device carries the
//    same copy measurements. replaced_rows() counts them.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/common/dtype.hpp"
#include "tessera/core/common/input_error.hpp"
#include "tessera/core/common/tensor_shape.hpp"
#include "tessera/core/model/layer.hpp"

namespace tessera {

inline constexpr std::string_view kProfileHeader =
    "device,op,direction,shape,dtype,micro_batch,algorithm,time_s,workspace_bytes,ok";

enum class Direction { forward, backward_data, backward_filter };
std::string to_string(Direction direction);

struct ProfileEntry {
  std::string device;
  std::string op;  // to_string(LayerKind) or a copy/collective name
  Direction direction = Direction::forward;
  std::string shape;  // kernel_shape_key()
  DType dtype = DType::float32;
  std::int64_t micro_batch = 1;
  std::string algorithm;
  double time_seconds = 0;
  double workspace_bytes = 0;
  bool ok = true;
  SourceLocation where;  // the row's file and line; empty when measured by this process
};

// How a convolution's micro-batch sizes b below its batch B were timed: alone (one call of b
// samples, repeated) or in context (B/b calls one after another over the whole batch, as a
// micro-batched plan runs them, the time divided by B/b).
enum class MicroBatchTiming { alone, in_context };
std::string to_string(MicroBatchTiming timing);

// What each timed run found in the caches:
//  - warm: its own operands, left by the run before it (runs back to back);
//  - flushed: nothing, a buffer of twice the last-level cache having been written before it;
//  - step_like: what a kernel finds in a training step, where the layers before it pass other
//    tensors through the caches but the libraries' code and tables stay cached: the buffer
//    written, then the same kernel run once on a second set of operands, so that the timed run
//    finds its operands in memory, its code cached and the cache full of other lines.
// unrecorded: a file written before 2026-12-04, which does not say (flushed, unless `tessera
// profile` was given --warm-caches).
enum class RunCaches { unrecorded, warm, flushed, step_like };
std::string to_string(RunCaches caches);

struct ProfileMetadata {
  std::string device;
  std::string libraries;
  std::string created_utc;
  MicroBatchTiming micro_batch_timing = MicroBatchTiming::alone;
  RunCaches caches = RunCaches::unrecorded;  // the `# caches:` line is written when recorded
};

// Canonical text of what a kernel computes, without the batch: the op's hyper-parameters and the
// per-sample input and output shapes, e.g. "conv k3x3x3 s1x1x1 p1x1x1 d1x1x1 g1 in 4x66x256x256
// out 16x64x256x256".
std::string kernel_shape_key(const Layer& layer, const std::vector<TensorShape>& inputs,
                             const TensorShape& output);

// Rows that time data movement, not a layer: `tessera profile` measures them to describe the
// machine (this_machine.yaml); the cost model does not read them, and the simulator reads the
// all-reduce rows for groups on one node (simulator/.../measured_allreduce.hpp).
bool is_transfer_op(const std::string& op);  // copy_*, allreduce, sendrecv
// Rows of the machine rather than of a model's kernels: transfers and rank passes
// (rank_passes.hpp).
bool describes_machine(const std::string& op);

class ProfileDatabase {
 public:
  // A row for a key already here (same kernel, micro_batch and algorithm) replaces that row: a
  // newer measurement, or a later file's.
  void add(ProfileEntry entry);
  // Every row of `later` added as above, its files' metadata after this one's: the same database
  // as loading the files of both, this one's first.
  void merge(const ProfileDatabase& later);
  // Fastest successful algorithm for the whole batch at once within a workspace limit.
  std::optional<ProfileEntry> best(const std::string& device, const std::string& op,
                                   Direction direction, const std::string& shape, DType dtype,
                                   std::int64_t micro_batch, double workspace_limit_bytes) const;
  std::vector<ProfileEntry> entries_for(const std::string& device, const std::string& op,
                                        Direction direction, const std::string& shape,
                                        DType dtype) const;
  // The rows of one op at every shape (e.g. the optimizer update at each parameter count).
  std::vector<ProfileEntry> entries_of_op(const std::string& device, const std::string& op,
                                          Direction direction, DType dtype) const;
  // Every row, ordered by key.
  std::vector<ProfileEntry> rows() const;
  std::size_t size() const { return count_; }
  std::size_t replaced_rows() const { return replaced_; }
  const std::vector<ProfileMetadata>& sources() const { return sources_; }

  // Adds a file's rows under the rules above. Throws InputError naming file, line, column and key
  // on malformed input, and leaves the database as it was.
  void load_csv(const std::string& path);
  void load_csv_text(const std::string& text, const std::string& file_name);
  // The whole database as one file in the format above.
  std::string to_csv(const ProfileMetadata& metadata) const;

 private:
  std::map<std::string, std::vector<ProfileEntry>> by_kernel_;  // key: device|op|dir|shape|dtype
  std::vector<ProfileMetadata> sources_;
  std::size_t count_ = 0;
  std::size_t replaced_ = 0;
};

}  // namespace tessera

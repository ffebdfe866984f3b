#pragma once
// Measured kernel times, written by `tessera profile` and read by the cost model. One CSV file per
// device and date (format `tessera-profile/1`):
//
//   # tessera-profile/1
//   # device: <name as the cluster file's gpu.model, or the CPU's model name>
//   # libraries: cuDNN 9.19.0, NCCL 2.28.9
//   # created_utc: 2026-11-21T12:00:00Z
//   device,op,direction,shape,dtype,micro_batch,algorithm,time_s,workspace_bytes,ok
//
// `shape` is kernel_shape_key() of the layer shard, so the profiler and the simulator agree on
// what was measured; `micro_batch` is the batch one kernel call processed (the shard's N when
// undivided); `ok` says whether the algorithm ran.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/dtype.hpp"
#include "tessera/core/layer.hpp"
#include "tessera/core/tensor_shape.hpp"

namespace tessera {

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
};

struct ProfileMetadata {
  std::string device;
  std::string libraries;
  std::string created_utc;
};

// Canonical text of what a kernel computes, without the batch: the op's hyper-parameters and the
// per-sample input and output shapes, e.g. "conv k3x3x3 s1x1x1 p1x1x1 d1x1x1 g1 in 4x66x256x256
// out 16x64x256x256".
std::string kernel_shape_key(const Layer& layer, const std::vector<TensorShape>& inputs,
                             const TensorShape& output);

class ProfileDatabase {
 public:
  void add(ProfileEntry entry);
  // Fastest successful algorithm for the whole batch at once within a workspace limit.
  std::optional<ProfileEntry> best(const std::string& device, const std::string& op,
                                   Direction direction, const std::string& shape, DType dtype,
                                   std::int64_t micro_batch, double workspace_limit_bytes) const;
  std::vector<ProfileEntry> entries_for(const std::string& device, const std::string& op,
                                        Direction direction, const std::string& shape,
                                        DType dtype) const;
  std::size_t size() const { return count_; }
  const std::vector<ProfileMetadata>& sources() const { return sources_; }

  // Appends a file's entries. Throws InputError naming file and line on malformed input.
  void load_csv(const std::string& path);
  void load_csv_text(const std::string& text, const std::string& file_name);
  // The whole database as one file in the format above.
  std::string to_csv(const ProfileMetadata& metadata) const;

 private:
  std::map<std::string, std::vector<ProfileEntry>> by_kernel_;  // key: device|op|dir|shape|dtype
  std::vector<ProfileMetadata> sources_;
  std::size_t count_ = 0;
};

}  // namespace tessera

#pragma once
// Everything core knows about one layer kind, in one place: the keys a model file gives it, its
// shape rule, its weights, its FLOPs, what its backward pass reads and its profile key. Each kind
// is one file of core/src/model/kinds/ and one line of the registry (kinds/layer_kinds.cpp);
// model files, shape inference, layer costs and profile keys ask the kind's rules and switch on
// no kind. docs/design/architecture.md, "A layer kind", lists what else a new kind touches.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tessera/core/common/dtype.hpp"
#include "tessera/core/common/tensor_shape.hpp"
#include "tessera/core/common/yaml_reader_fwd.hpp"
#include "tessera/core/model/layer.hpp"
#include "tessera/core/model/layer_cost.hpp"
#include "tessera/core/model/tensor_role.hpp"

namespace tessera {

// One layer with its shapes, as a cost is asked for `batch` samples of them.
struct LayerCostQuery {
  const Layer& layer;
  const std::vector<TensorShape>& inputs;
  const TensorShape& output;
  std::int64_t batch = 0;
  DType dtype = DType::float32;

  double input_elements() const;   // of the first input over the batch (0 with no input)
  double output_elements() const;  // over the batch
};

class LayerKindRules {
 public:
  virtual ~LayerKindRules() = default;

  // The keys a model file may give this kind besides name, op and inputs.
  virtual std::vector<std::string> model_file_keys() const { return {}; }
  virtual LayerParams parse(const YamlMap& map) const;
  // The layer's hyper-parameters after shape inference, as `tessera describe --json` writes them.
  virtual nlohmann::json params_json(const Layer& layer) const;

  // The output shape from the input shapes; expands `layer`'s per-axis values to the input's
  // rank in place. Throws ModelError naming the layer.
  virtual TensorShape infer_shape(Layer& layer, const std::vector<TensorShape>& inputs) const = 0;

  // The extents of the layer's largest weight tensor, whose product shape inference bounds
  // (empty without weights), and the number of parameters.
  virtual std::vector<std::int64_t> weight_extents(const Layer& layer,
                                                   const std::vector<TensorShape>& inputs) const;
  virtual std::int64_t parameters(const Layer& layer, const std::vector<TensorShape>& inputs,
                                  const TensorShape& output) const;
  // The embedding whose table this layer reads as its weights (tied weights: shared_with), or
  // "" where it owns its weights. The table's extents must equal this layer's weight_extents.
  virtual std::string table_owner(const Layer& layer) const;

  virtual BackwardNeeds backward_needs(const Layer& layer) const;
  // Fills the flops of `cost` (whose parameters, bytes and backward needs are set), and
  // weight_bytes_read and saved_for_backward_bytes where the kind differs from the defaults.
  virtual void add_cost(const LayerCostQuery& query, LayerCost& cost) const;

  // What tells two kernels of this kind apart besides their shapes, for the profile database
  // (" k3 s1 p1 d1 g1" for a convolution); empty where the shapes say all.
  virtual std::string profile_key(const Layer& layer) const;

  // What tensor parallelism may do with it (tensor_role.hpp).
  virtual TensorRole tensor_role(const Layer& /*layer*/) const { return TensorRole::whole; }
  // The count `split` divides over the GPUs of a tensor group (output channels by default; heads,
  // a table's rows), which must divide evenly unless splits_unevenly.
  virtual std::int64_t tensor_split_extent(const Layer& layer, TensorSplit split,
                                           const TensorShape& output) const;
  // Whether the busiest GPU may hold the rounded-up share of that count (a vocabulary's rows, as
  // Megatron pads the vocabulary to a multiple of the degree).
  virtual bool splits_unevenly(const Layer& /*layer*/) const { return false; }
  // The layer one GPU of a group of `parts` runs under `split`: its output channels, heads or
  // rows divided (rounded up). Row and channel-wise splits need nothing: the shapes say all.
  virtual void split_for_tensor(Layer& /*layer*/, TensorSplit /*split*/,
                                std::int64_t /*parts*/) const {}

  // Its weight gradients come out of the pass that computes its input gradient (batch and layer
  // norm's sums, attention's pass back through its heads): the step program runs that pass even
  // where no input gradient is wanted.
  virtual bool weight_gradients_from_backward_data() const { return false; }
  // A matrix product (convolution, GEMM, the sequence layers' products): tensor cores run it in
  // reduced precision.
  virtual bool is_matrix_product() const { return false; }
  // A recurrent model's kind (a sequence N x C x T in and out); the real backend runs these on
  // CPU ranks only.
  virtual bool is_sequence() const { return false; }
  // Its output at one time step reads other steps, so spatial parallelism cannot split it along
  // time.
  virtual bool depends_across_time() const { return false; }
};

struct LayerKindEntry {
  LayerKind kind;
  const char* model_file_name;  // the `op` of model files
  const LayerKindRules* rules;
};

// Every kind, in LayerKind order.
const std::vector<LayerKindEntry>& layer_kinds();
const LayerKindRules& rules_of(LayerKind kind);

}  // namespace tessera

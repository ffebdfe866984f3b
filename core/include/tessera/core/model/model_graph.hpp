#pragma once
// A model as a directed acyclic graph of layers, topologically ordered, with every layer's
// resolved shapes. Built from an unordered layer list (model files) or by GraphBuilder (zoo).
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/core/common/tensor_shape.hpp"
#include "tessera/core/model/layer.hpp"

namespace tessera {

// A structural problem in a model, attributed to one layer; loaders turn it into an InputError
// pointing at that layer's definition.
class ModelError : public std::runtime_error {
 public:
  ModelError(std::string layer, std::string problem);
  const std::string& layer() const { return layer_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string layer_;
  std::string problem_;
};

// A layer after shape inference: per-sample shapes (N = 1) and hyper-parameters expanded to one
// value per spatial axis.
struct ResolvedLayer {
  Layer layer;
  std::vector<std::size_t> input_indices;  // into ModelGraph::layers()
  std::vector<TensorShape> input_shapes;
  TensorShape output_shape;
};

class ModelGraph {
 public:
  // The shape a layer sees of its input `input` (its position in the layer's inputs), given the
  // shape its producer makes: the same, but where something between them changes it (a tensor
  // group's all-gather of split channels).
  using InputShapeRule = std::function<TensorShape(const Layer& layer, std::size_t input,
                                                   const TensorShape& produced)>;
  // Orders the layers topologically, checks names and edges, infers shapes. Throws ModelError.
  static ModelGraph from_layers(std::string name, std::vector<Layer> layers,
                                const InputShapeRule& input_shape = {});

  const std::string& name() const { return name_; }
  const std::vector<ResolvedLayer>& layers() const { return layers_; }
  const ResolvedLayer& layer(const std::string& name) const;  // throws ModelError if absent
  std::optional<std::size_t> index_of(const std::string& name) const;
  const ResolvedLayer& output() const { return layers_.back(); }
  std::vector<std::size_t> consumers_of(std::size_t index) const;

  // Mini-batch the model was defined with (DeepBench problems carry one); scenarios may override.
  std::optional<std::int64_t> default_mini_batch() const { return default_mini_batch_; }
  void set_default_mini_batch(std::int64_t batch) { default_mini_batch_ = batch; }

 private:
  static void check_shared_tables(const ModelGraph& graph);

  std::string name_;
  std::vector<ResolvedLayer> layers_;
  std::unordered_map<std::string, std::size_t> index_by_name_;
  std::optional<std::int64_t> default_mini_batch_;
};

}  // namespace tessera

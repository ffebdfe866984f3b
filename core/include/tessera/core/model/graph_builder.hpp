#pragma once
// Fluent construction of a ModelGraph in code (the model zoo). Each call appends a layer fed by
// the named inputs and returns the new layer's name, so branches and skips read naturally.
#include <string>
#include <vector>

#include "tessera/core/model/model_graph.hpp"

namespace tessera {

class GraphBuilder {
 public:
  explicit GraphBuilder(std::string model_name) : model_name_(std::move(model_name)) {}

  std::string input(const std::string& name, std::int64_t channels,
                    std::vector<std::int64_t> spatial);
  std::string conv(const std::string& name, const std::string& from, ConvolutionParams params);
  std::string transposed_conv(const std::string& name, const std::string& from,
                              ConvolutionParams params);
  std::string pool(const std::string& name, const std::string& from, PoolingParams params);
  std::string batch_norm(const std::string& name, const std::string& from,
                         BatchNormParams params = {});
  std::string relu(const std::string& name, const std::string& from);
  std::string leaky_relu(const std::string& name, const std::string& from, double slope);
  std::string gelu(const std::string& name, const std::string& from,
                   GeluApproximation approximation = GeluApproximation::none);
  std::string dropout(const std::string& name, const std::string& from, double drop_probability);
  std::string fully_connected(const std::string& name, const std::string& from,
                              std::int64_t out_features, bool bias = true);
  std::string concat(const std::string& name, const std::vector<std::string>& from);
  std::string add(const std::string& name, const std::vector<std::string>& from);
  std::string softmax_cross_entropy(const std::string& name, const std::string& from);
  std::string mse_loss(const std::string& name, const std::string& from);
  std::string lstm(const std::string& name, const std::string& from, LstmParams params);
  std::string embedding(const std::string& name, const std::string& from, EmbeddingParams params);
  // Inputs: the query sequence, then the memory it attends over.
  std::string attention(const std::string& name, const std::string& query,
                        const std::string& memory, AttentionParams params);
  std::string projection(const std::string& name, const std::string& from, ProjectionParams params);
  std::string layer_norm(const std::string& name, const std::string& from, bool affine = true);
  std::string self_attention(const std::string& name, const std::string& from,
                             SelfAttentionParams params);
  std::string position_embedding(const std::string& name, const std::string& from,
                                 std::int64_t positions);

  // Convolution, batch-norm (if requested) and ReLU: the block most CNNs repeat.
  std::string conv_bn_relu(const std::string& name, const std::string& from,
                           ConvolutionParams params, bool with_batch_norm = true);

  ModelGraph build() &&;

 private:
  std::string append(Layer layer);

  std::string model_name_;
  std::vector<Layer> layers_;
};

}  // namespace tessera

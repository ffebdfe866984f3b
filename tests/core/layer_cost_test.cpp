// FLOPs, parameters and backward needs of single layers, computed by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/core/model/graph_builder.hpp"
#include "tessera/core/model/layer_cost.hpp"

namespace tessera {
namespace {

// Builds input -> `add(builder, "input")` and returns the model; the layer under test is "x".
template <typename AddLayer>
ModelGraph single_layer(std::int64_t channels, std::vector<std::int64_t> spatial,
                        AddLayer add_layer) {
  GraphBuilder b("single");
  const auto input = b.input("input", channels, std::move(spatial));
  add_layer(b, input);
  return std::move(b).build();
}

// ---------------------------------------------------------------------------------------------
// Convolutions

TEST(LayerCost, GroupedConvolutionWithBias) {
  // 8 -> 16 channels in 4 groups, 3x3, "same" on 10x10: each output element reads 2 channels x 9.
  const auto model = single_layer(8, {10, 10}, [](GraphBuilder& b, const std::string& in) {
    b.conv("x", in, {.out_channels = 16, .kernel = {3}, .padding = {1}, .groups = 4, .bias = true});
  });
  const auto& layer = model.layer("x");
  EXPECT_EQ(layer.output_shape, (TensorShape{1, 16, {10, 10}}));
  EXPECT_EQ(parameter_count(layer), 16 * 2 * 9 + 16);

  const auto cost = layer_cost(layer, 2, DType::float32);
  const double outputs = 2 * 16 * 100;
  const double macs = outputs * 2 * 9;  // 57,600
  EXPECT_EQ(cost.flops.forward, 2 * macs + outputs);
  EXPECT_EQ(cost.flops.backward_data, 2 * macs);
  EXPECT_EQ(cost.flops.backward_filter, 2 * macs + outputs);
  EXPECT_EQ(cost.flops.total(), 6 * macs + 2 * outputs);
  EXPECT_EQ(cost.parameters, 304);
  EXPECT_EQ(cost.weight_bytes, 304 * 4);
  EXPECT_EQ(cost.output_bytes, 2 * 16 * 100 * 4);
  EXPECT_EQ(cost.saved_for_backward_bytes, 0);
}

TEST(LayerCost, ConvolutionWithoutBiasStrideAndDilation) {
  // 3 -> 8 channels, 5x5 stride 2, dilation 2, pad 4 on 16x16: output 8x8.
  const auto model = single_layer(3, {16, 16}, [](GraphBuilder& b, const std::string& in) {
    b.conv("x", in,
           {.out_channels = 8, .kernel = {5}, .stride = {2}, .padding = {4}, .dilation = {2}});
  });
  const auto& layer = model.layer("x");
  EXPECT_EQ(layer.output_shape, (TensorShape{1, 8, {8, 8}}));
  EXPECT_EQ(parameter_count(layer), 8 * 3 * 25);  // dilation adds no weights
  const auto cost = layer_cost(layer, 1, DType::float32);
  const double macs = 8.0 * 64 * 3 * 25;
  EXPECT_EQ(cost.flops.forward, 2 * macs);
  EXPECT_EQ(cost.flops.backward_data, 2 * macs);
  EXPECT_EQ(cost.flops.backward_filter, 2 * macs);
}

TEST(LayerCost, DepthwiseConvolution) {
  const auto model = single_layer(6, {4, 4}, [](GraphBuilder& b, const std::string& in) {
    b.conv("x", in, {.out_channels = 6, .kernel = {3}, .padding = {1}, .groups = 6});
  });
  const auto& layer = model.layer("x");
  EXPECT_EQ(parameter_count(layer), 6 * 9);
  EXPECT_EQ(layer_cost(layer, 1, DType::float32).flops.forward, 2.0 * 6 * 16 * 9);
}

TEST(LayerCost, ThreeDimensionalConvolution) {
  // CosmoFlow's conv1 at width 128: 4 -> 16, 3^3 "same", no bias.
  const auto model = single_layer(4, {128, 128, 128}, [](GraphBuilder& b, const std::string& in) {
    b.conv("x", in, {.out_channels = 16, .kernel = {3}, .padding = {1}});
  });
  const auto& layer = model.layer("x");
  EXPECT_EQ(parameter_count(layer), 16 * 4 * 27);
  const double macs = 16.0 * 128 * 128 * 128 * 4 * 27;
  EXPECT_EQ(layer_cost(layer, 1, DType::float32).flops.forward, 2 * macs);
  EXPECT_EQ(layer_cost(layer, 3, DType::float32).flops.forward, 3 * 2 * macs);
}

TEST(LayerCost, TransposedConvolution) {
  // 8 -> 4 channels, 2x2 stride 2 on 4x4: output 8x8. Every input element scatters 4 x 2x2.
  const auto model = single_layer(8, {4, 4}, [](GraphBuilder& b, const std::string& in) {
    b.transposed_conv("x", in, {.out_channels = 4, .kernel = {2}, .stride = {2}, .bias = true});
  });
  const auto& layer = model.layer("x");
  EXPECT_EQ(layer.output_shape, (TensorShape{1, 4, {8, 8}}));
  EXPECT_EQ(parameter_count(layer), 8 * 4 * 4 + 4);
  const auto cost = layer_cost(layer, 1, DType::float32);
  const double macs = 16.0 * 8 * 4 * 4;  // input positions x in x out x kernel = 2048
  const double outputs = 4 * 64;
  EXPECT_EQ(cost.flops.forward, 2 * macs + outputs);
  EXPECT_EQ(cost.flops.backward_data, 2 * macs);
  EXPECT_EQ(cost.flops.backward_filter, 2 * macs + outputs);
  // Same multiply-adds as the forward convolution it transposes (4 -> 8 channels, 8x8 -> 4x4).
  const auto forward_model = single_layer(4, {8, 8}, [](GraphBuilder& b, const std::string& in) {
    b.conv("x", in, {.out_channels = 8, .kernel = {2}, .stride = {2}});
  });
  EXPECT_EQ(layer_cost(forward_model.layer("x"), 1, DType::float32).flops.forward, 2 * macs);
}

// ---------------------------------------------------------------------------------------------
// Other layers

TEST(LayerCost, FullyConnected) {
  const auto model = single_layer(4, {8, 8}, [](GraphBuilder& b, const std::string& in) {
    const auto with_bias = b.fully_connected("x", in, 10);
    b.fully_connected("y", with_bias, 3, false);
  });
  const auto& x = model.layer("x");
  EXPECT_EQ(parameter_count(x), 256 * 10 + 10);
  const auto cost = layer_cost(x, 4, DType::float32);
  EXPECT_EQ(cost.flops.forward, 2.0 * 4 * 256 * 10 + 4 * 10);
  EXPECT_EQ(cost.flops.backward_data, 2.0 * 4 * 256 * 10);
  EXPECT_EQ(cost.flops.backward_filter, 2.0 * 4 * 256 * 10 + 4 * 10);
  EXPECT_EQ(cost.output_bytes, 4 * 10 * 4);

  const auto& y = model.layer("y");
  EXPECT_EQ(parameter_count(y), 30);
  const auto no_bias = layer_cost(y, 1, DType::float16);
  EXPECT_EQ(no_bias.flops.forward, 2.0 * 10 * 3);
  EXPECT_EQ(no_bias.flops.backward_filter, 2.0 * 10 * 3);
  EXPECT_EQ(no_bias.weight_bytes, 30 * 2);
}

TEST(LayerCost, Pooling) {
  const auto model = single_layer(4, {8, 8}, [](GraphBuilder& b, const std::string& in) {
    b.pool("x", in, PoolingParams{});  // max 2x2 stride 2
    b.pool("avg", in,
           PoolingParams{.mode = PoolMode::average, .kernel = {3}, .stride = {2}, .padding = {1}});
  });
  const auto& max_pool = model.layer("x");
  EXPECT_EQ(max_pool.output_shape, (TensorShape{1, 4, {4, 4}}));
  EXPECT_EQ(parameter_count(max_pool), 0);
  const auto cost = layer_cost(max_pool, 2, DType::float32);
  EXPECT_EQ(cost.flops.forward, 2.0 * 64 * 4);  // outputs x window
  EXPECT_EQ(cost.flops.backward_data, 2.0 * 64 * 4);
  EXPECT_EQ(cost.flops.backward_filter, 0);

  const auto& avg = model.layer("avg");
  EXPECT_EQ(avg.output_shape, (TensorShape{1, 4, {4, 4}}));
  EXPECT_EQ(layer_cost(avg, 1, DType::float32).flops.forward, 64.0 * 9);
}

TEST(LayerCost, BatchNormHasTwoParametersPerChannel) {
  const auto model = single_layer(12, {5, 5}, [](GraphBuilder& b, const std::string& in) {
    const auto x = b.batch_norm("x", in);
    b.batch_norm("plain", x, {.affine = false});
  });
  EXPECT_EQ(parameter_count(model.layer("x")), 2 * 12);
  EXPECT_EQ(parameter_count(model.layer("plain")), 0);
  const double elements = 3 * 12 * 25;
  const auto cost = layer_cost(model.layer("x"), 3, DType::float32);
  EXPECT_EQ(cost.flops.forward, 5 * elements);
  EXPECT_EQ(cost.flops.backward_data, 8 * elements);
  EXPECT_EQ(cost.flops.backward_filter, 2 * elements);
  EXPECT_EQ(layer_cost(model.layer("plain"), 3, DType::float32).flops.backward_filter, 0);
}

TEST(LayerCost, ElementWiseLayers) {
  const auto model = single_layer(2, {3, 3}, [](GraphBuilder& b, const std::string& in) {
    const auto r = b.relu("relu", in);
    const auto l = b.leaky_relu("leaky", r, 0.1);
    const auto d = b.dropout("drop", l, 0.25);
    const auto a = b.add("add", {d, r, l});
    const auto c = b.concat("cat", {a, in});
    b.mse_loss("loss", c);
  });
  const double e = 2 * 18;  // batch 2, 18 elements each
  EXPECT_EQ(layer_cost(model.layer("relu"), 2, DType::float32).flops.forward, e);
  EXPECT_EQ(layer_cost(model.layer("leaky"), 2, DType::float32).flops.forward, 2 * e);
  const auto drop = layer_cost(model.layer("drop"), 2, DType::float32);
  EXPECT_EQ(drop.flops.forward, e);
  EXPECT_EQ(drop.saved_for_backward_bytes, 36);  // a one-byte keep mask per element
  EXPECT_EQ(layer_cost(model.layer("add"), 2, DType::float32).flops.forward, 2 * e);
  const auto cat = layer_cost(model.layer("cat"), 2, DType::float32);
  EXPECT_EQ(cat.flops.total(), 0);
  EXPECT_EQ(cat.output_bytes, 2 * 4 * 9 * 4);
  const auto loss = layer_cost(model.layer("loss"), 2, DType::float32);
  EXPECT_EQ(loss.flops.forward, 3 * 2 * 36.0);
  EXPECT_EQ(loss.flops.backward_data, 2 * 2 * 36.0);
}

TEST(LayerCost, LocalShardCosts) {
  // The cost of a shard: the same layer with a quarter of the rows.
  const auto model = single_layer(4, {16, 16}, [](GraphBuilder& b, const std::string& in) {
    b.conv("x", in, {.out_channels = 8, .kernel = {3}, .padding = {1}});
  });
  const auto& layer = model.layer("x");
  const auto whole = layer_cost(layer, 1, DType::float32);
  const auto shard = layer_cost(layer.layer, {TensorShape{1, 4, {4, 16}}},
                                TensorShape{1, 8, {4, 16}}, 1, DType::float32);
  EXPECT_EQ(shard.flops.forward * 4, whole.flops.forward);
  EXPECT_EQ(shard.parameters, whole.parameters);
  EXPECT_EQ(shard.output_bytes * 4, whole.output_bytes);
}

TEST(LayerCost, ParameterCountOfASmallGraph) {
  GraphBuilder b("small");
  auto x = b.input("input", 3, {32, 32});
  x = b.conv("conv1", x, {.out_channels = 8, .kernel = {3}, .padding = {1}, .bias = true});
  x = b.batch_norm("bn1", x);
  x = b.relu("relu1", x);
  x = b.pool("pool1", x, PoolingParams{});
  x = b.conv("conv2", x, {.out_channels = 16, .kernel = {3}, .padding = {1}});
  x = b.batch_norm("bn2", x);
  x = b.relu("relu2", x);
  x = b.pool("pool2", x, PoolingParams{});
  x = b.dropout("drop", x, 0.5);
  x = b.fully_connected("fc", x, 10);
  b.softmax_cross_entropy("loss", x);
  const auto model = std::move(b).build();
  const std::int64_t conv1 = 3 * 8 * 9 + 8, bn1 = 16, conv2 = 8 * 16 * 9, bn2 = 32,
                     fc = 16 * 8 * 8 * 10 + 10;
  EXPECT_EQ(parameter_count(model), conv1 + bn1 + conv2 + bn2 + fc);
  EXPECT_EQ(parameter_count(model), 11'674);
}

// ---------------------------------------------------------------------------------------------
// What backward passes read

struct NeedsCase {
  LayerKind kind;
  LayerParams params;
  bool input, output, mask;
};

TEST(BackwardNeeds, Table) {
  const std::vector<NeedsCase> cases{
      {LayerKind::input, InputParams{}, false, false, false},
      {LayerKind::convolution, ConvolutionParams{}, true, false, false},
      {LayerKind::transposed_convolution, ConvolutionParams{}, true, false, false},
      {LayerKind::fully_connected, FullyConnectedParams{}, true, false, false},
      {LayerKind::batch_norm, BatchNormParams{}, true, false, false},
      {LayerKind::leaky_relu, LeakyReluParams{}, true, false, false},
      {LayerKind::mse_loss, NoParams{}, true, false, false},
      {LayerKind::relu, NoParams{}, false, true, false},
      {LayerKind::softmax_cross_entropy, NoParams{}, false, true, false},
      {LayerKind::pooling, PoolingParams{.mode = PoolMode::max}, true, true, false},
      {LayerKind::pooling, PoolingParams{.mode = PoolMode::average}, false, false, false},
      {LayerKind::dropout, DropoutParams{}, false, false, true},
      {LayerKind::concat, NoParams{}, false, false, false},
      {LayerKind::add, NoParams{}, false, false, false},
  };
  for (const auto& c : cases) {
    const Layer layer{"l", c.kind, c.params, {}};
    const auto needs = backward_needs(layer);
    EXPECT_EQ(needs.input, c.input) << to_string(c.kind);
    EXPECT_EQ(needs.output, c.output) << to_string(c.kind);
    EXPECT_EQ(needs.mask, c.mask) << to_string(c.kind);
  }
}

TEST(BackwardNeeds, ReportedInLayerCost) {
  const auto model =
      single_layer(1, {4, 4}, [](GraphBuilder& b, const std::string& in) { b.relu("x", in); });
  const auto needs = layer_cost(model.layer("x"), 1, DType::float32).backward_needs;
  EXPECT_FALSE(needs.input);
  EXPECT_TRUE(needs.output);
  EXPECT_FALSE(needs.mask);
}

}  // namespace
}  // namespace tessera

// The layers recurrent models add (lstm, embedding, attention, projection): shapes, parameters
// and FLOPs against hand counts, shared embeddings, model files, and the strategy's refusal to
// split time.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/core/common/yaml_reader.hpp"
#include "tessera/core/cost/cost_model.hpp"
#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/model/graph_builder.hpp"
#include "tessera/core/model/layer_cost.hpp"
#include "tessera/core/model/model_file.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"
#include "test_support.hpp"

namespace tessera {
namespace {

// A sequence of `steps` tokens (one stream) embedded in `width` dimensions, then `add_layer`.
template <typename AddLayer>
ModelGraph on_sequence(std::int64_t width, std::int64_t steps, AddLayer add_layer) {
  GraphBuilder b("sequence");
  const auto tokens = b.input("tokens", 1, {steps});
  const auto embedded = b.embedding("embed", tokens, {.vocabulary = 100, .dimension = width});
  add_layer(b, embedded);
  return std::move(b).build();
}

TEST(SequenceLayers, LstmWithDoubleBiasAsCudnn) {
  // I = 16, H = 32, no projection, bias vectors b_ih and b_hh: 4H (I + H) + 8H.
  const auto model = on_sequence(
      16, 10, [](GraphBuilder& b, const std::string& in) { b.lstm("x", in, {.hidden = 32}); });
  const auto& layer = model.layer("x");
  EXPECT_EQ(layer.output_shape, (TensorShape{1, 32, {10}}));
  EXPECT_EQ(parameter_count(layer), 4 * 32 * (16 + 32) + 8 * 32);

  const auto cost = layer_cost(layer, 3, DType::float32);
  const double positions = 3.0 * 10;
  const double gate_macs = 4.0 * 32 * (16 + 32);
  EXPECT_EQ(cost.flops.forward, positions * (2 * gate_macs + 2 * 4 * 32 + 9 * 32));
  EXPECT_EQ(cost.flops.backward_data, positions * (2 * gate_macs + 18 * 32));
  EXPECT_EQ(cost.flops.backward_filter, positions * (2 * gate_macs + 2 * 4 * 32));
  // Gates and cell state of every step: 5H floats per position.
  EXPECT_EQ(cost.saved_for_backward_bytes, 3 * 10 * 5 * 32 * 4);
  EXPECT_TRUE(cost.backward_needs.input);
  EXPECT_TRUE(cost.backward_needs.output);
}

TEST(SequenceLayers, LstmWithProjectionAndSingleBiasAsTensorFlow) {
  // TensorFlow's LSTMCell(num_units = H, num_proj = P): W [(I + P), 4H], one bias 4H, W_P [H, P].
  const auto model = on_sequence(8, 5, [](GraphBuilder& b, const std::string& in) {
    b.lstm("x", in, {.hidden = 64, .projection = 8, .bias = LstmBias::single});
  });
  const auto& layer = model.layer("x");
  EXPECT_EQ(layer.output_shape, (TensorShape{1, 8, {5}}));
  EXPECT_EQ(parameter_count(layer), 4 * 64 * (8 + 8) + 4 * 64 + 64 * 8);
  const auto cost = layer_cost(layer, 1, DType::float32);
  EXPECT_EQ(cost.flops.forward, 5.0 * (2 * 4 * 64 * 16 + 4 * 64 + 9 * 64 + 2 * 64 * 8));
  EXPECT_EQ(cost.saved_for_backward_bytes, 5 * (5 * 64 + 64) * 4);
}

TEST(SequenceLayers, BidirectionalLstmDoublesEverything) {
  const auto one = on_sequence(16, 4, [](GraphBuilder& b, const std::string& in) {
    b.lstm("x", in, {.hidden = 32, .bias = LstmBias::none});
  });
  const auto two = on_sequence(16, 4, [](GraphBuilder& b, const std::string& in) {
    b.lstm("x", in, {.hidden = 32, .bidirectional = true, .bias = LstmBias::none});
  });
  EXPECT_EQ(two.layer("x").output_shape, (TensorShape{1, 64, {4}}));
  EXPECT_EQ(parameter_count(two.layer("x")), 2 * parameter_count(one.layer("x")));
  EXPECT_EQ(parameter_count(one.layer("x")), 4 * 32 * (16 + 32));
  EXPECT_EQ(layer_cost(two.layer("x"), 2, DType::float32).flops.total(),
            2 * layer_cost(one.layer("x"), 2, DType::float32).flops.total());
}

TEST(SequenceLayers, EmbeddingGathersAndScattersRows) {
  const auto model = on_sequence(16, 10, [](GraphBuilder&, const std::string&) {});
  const auto& layer = model.layer("embed");
  EXPECT_EQ(layer.output_shape, (TensorShape{1, 16, {10}}));
  EXPECT_EQ(parameter_count(layer), 100 * 16);
  const auto cost = layer_cost(layer, 4, DType::float32);
  EXPECT_EQ(cost.flops.forward, 0);
  EXPECT_EQ(cost.flops.backward_data, 0);  // token ids have no gradient
  EXPECT_EQ(cost.flops.backward_filter, 4.0 * 10 * 16);
  EXPECT_EQ(cost.weight_bytes, 100 * 16 * 4);
  // 40 lookups read at most 40 of the 100 rows.
  EXPECT_EQ(cost.weight_bytes_read, 40 * 16 * 4);
  EXPECT_EQ(layer_cost(layer, 64, DType::float32).weight_bytes_read, 100 * 16 * 4);
}

TEST(SequenceLayers, SharedEmbeddingHasNoParametersOfItsOwn) {
  GraphBuilder b("translator");
  const auto tokens = b.input("tokens", 2, {7});
  b.embedding("source", tokens, {.vocabulary = 50, .dimension = 8});
  b.embedding("target", tokens,
              {.vocabulary = 50, .dimension = 8, .channel = 1, .shared_with = "source"});
  const auto model = std::move(b).build();
  EXPECT_EQ(parameter_count(model.layer("source")), 400);
  EXPECT_EQ(parameter_count(model.layer("target")), 0);
  EXPECT_EQ(parameter_count(model), 400);
}

TEST(SequenceLayers, SharedEmbeddingMustNameAnOwnerOfTheSameSize) {
  auto build = [](EmbeddingParams second) {
    GraphBuilder b("translator");
    const auto tokens = b.input("tokens", 2, {7});
    b.embedding("source", tokens, {.vocabulary = 50, .dimension = 8});
    b.embedding("target", tokens, std::move(second));
    return std::move(b).build();
  };
  EXPECT_THROW(build({.vocabulary = 50, .dimension = 8, .channel = 1, .shared_with = "nothing"}),
               ModelError);
  EXPECT_THROW(build({.vocabulary = 51, .dimension = 8, .channel = 1, .shared_with = "source"}),
               ModelError);
  EXPECT_THROW(build({.vocabulary = 50, .dimension = 8, .channel = 1, .shared_with = "tokens"}),
               ModelError);
  EXPECT_THROW(build({.vocabulary = 50, .dimension = 8, .channel = 2}), ModelError);
}

TEST(SequenceLayers, NormalizedBahdanauAttentionAsMlperfGnmt) {
  // Query 12 wide over 6 steps, memory 20 wide over 9 steps, 10 units.
  GraphBuilder b("attend");
  const auto tokens = b.input("tokens", 2, {9});
  const auto query = b.embedding("query", tokens, {.vocabulary = 30, .dimension = 12});
  const auto memory =
      b.embedding("memory", tokens, {.vocabulary = 30, .dimension = 20, .channel = 1});
  b.attention("x", query, memory, {.units = 10});
  const auto model = std::move(b).build();
  const auto& layer = model.layer("x");
  EXPECT_EQ(layer.output_shape, (TensorShape{1, 20, {9}}));  // memory's width, query's steps
  // linear_q 10x12, linear_k 10x20, linear_att 10, normalize_scalar 1, normalize_bias 10.
  EXPECT_EQ(parameter_count(layer), 10 * 12 + 10 * 20 + 10 + 1 + 10);
  const auto cost = layer_cost(layer, 2, DType::float32);
  const double tq = 9, tk = 9, u = 10, pairs = tq * tk;
  const double projections = 2 * tq * 12 * u + 2 * tk * 20 * u;
  EXPECT_EQ(cost.flops.forward, 2 * (projections + 5 * pairs * u + 4 * pairs + 2 * pairs * 20));
  EXPECT_EQ(cost.flops.backward_filter, 2 * (projections + 2 * pairs * u));
  EXPECT_EQ(cost.saved_for_backward_bytes, 2 * 9 * 9 * 11 * 4);

  AttentionParams plain{.units = 10, .normalize = false};
  GraphBuilder c("attend");
  const auto t = c.input("tokens", 1, {9});
  const auto q = c.embedding("q", t, {.vocabulary = 30, .dimension = 12});
  const auto m = c.embedding("m", t, {.vocabulary = 30, .dimension = 12});
  c.attention("x", q, m, plain);
  EXPECT_EQ(parameter_count(std::move(c).build().layer("x")), 10 * 12 * 2 + 10);
}

TEST(SequenceLayers, ProjectionFullAndSampledSoftmax) {
  const auto full = on_sequence(16, 10, [](GraphBuilder& b, const std::string& in) {
    b.projection("x", in, {.out_features = 1000});
  });
  const auto sampled = on_sequence(16, 10, [](GraphBuilder& b, const std::string& in) {
    b.projection("x", in, {.out_features = 1000, .sampled = 63});
  });
  EXPECT_EQ(full.layer("x").output_shape, (TensorShape{1, 1000, {10}}));
  EXPECT_EQ(sampled.layer("x").output_shape, (TensorShape{1, 64, {10}}));
  // The weights are the whole vocabulary's either way.
  EXPECT_EQ(parameter_count(full.layer("x")), 16 * 1000 + 1000);
  EXPECT_EQ(parameter_count(sampled.layer("x")), 16 * 1000 + 1000);
  const auto cost = layer_cost(sampled.layer("x"), 2, DType::float32);
  EXPECT_EQ(cost.flops.forward, 2 * (2.0 * 10 * 16 * 64) + 2.0 * 10 * 64);
  EXPECT_EQ(cost.flops.backward_data, 2 * (2.0 * 10 * 16 * 64));
  // 63 sampled rows and the 20 positions' targets, each 16 weights and a bias.
  EXPECT_EQ(cost.weight_bytes_read, (63 + 20) * 17 * 4);
  EXPECT_EQ(layer_cost(full.layer("x"), 2, DType::float32).weight_bytes_read,
            (16 * 1000 + 1000) * 4);
}

TEST(SequenceLayers, RooflineReadsOnlyTheTouchedEmbeddingRows) {
  GraphBuilder b("big_table");
  const auto tokens = b.input("tokens", 1, {4});
  b.embedding("embed", tokens, {.vocabulary = 1 << 20, .dimension = 256});
  const auto model = std::move(b).build();
  const auto& layer = model.layer("embed");
  DeviceRoofline device{.device = "test",
                        .fp32_flops_per_second = 1e12,
                        .memory_bandwidth_bytes_per_second = 1e9,
                        .compute_efficiency = 1,
                        .memory_efficiency = 1,
                        .launch_latency_seconds = 0};
  ComputeCostModel costs(device, nullptr, 0.0);
  const auto time = costs.layer_time(layer.layer, layer.input_shapes, layer.output_shape, 1,
                                     DType::float32, Direction::forward);
  // Ids (4 floats), output (4 x 256 floats) and 4 rows of 256: not the 1 GiB table.
  EXPECT_DOUBLE_EQ(time.seconds, (4 + 4 * 256 + 4 * 256) * 4 / 1e9);
}

TEST(SequenceLayers, ShapeErrorsNameTheLayer) {
  GraphBuilder b("image");
  const auto image = b.input("image", 3, {8, 8});
  b.lstm("x", image, {.hidden = 4});
  try {
    std::move(b).build();
    FAIL() << "an LSTM over an image was accepted";
  } catch (const ModelError& error) {
    EXPECT_EQ(error.layer(), "x");
    EXPECT_TRUE(test::contains(error.problem(), "needs a sequence N x C x T"));
  }
}

TEST(SequenceLayers, ShapeKeysTellConfigurationsApart) {
  const auto a = on_sequence(
      16, 10, [](GraphBuilder& b, const std::string& in) { b.lstm("x", in, {.hidden = 32}); });
  const auto c = on_sequence(16, 10, [](GraphBuilder& b, const std::string& in) {
    b.lstm("x", in, {.hidden = 32, .bias = LstmBias::single});
  });
  const auto& la = a.layer("x");
  const auto& lc = c.layer("x");
  EXPECT_NE(kernel_shape_key(la.layer, la.input_shapes, la.output_shape),
            kernel_shape_key(lc.layer, lc.input_shapes, lc.output_shape));
}

TEST(SequenceLayers, SpatialParallelismStopsBeforeTheRecurrence) {
  const auto model = on_sequence(16, 8, [](GraphBuilder& b, const std::string& in) {
    const auto h = b.lstm("lstm", in, {.hidden = 16});
    const auto logits = b.projection("logits", h, {.out_features = 100});
    b.softmax_cross_entropy("loss", logits);
  });
  ParallelConfig config{.spatial_grid = {2}, .mini_batch = 2};
  // By default the split ends at the LSTM: only the input and the embedding are split in time.
  const auto plan = plan_shards(model, config, "", {});
  EXPECT_EQ(plan.spatial_end, *model.index_of("lstm"));
  try {
    plan_shards(model, config, "logits", {});
    FAIL() << "an LSTM split along time was accepted";
  } catch (const StrategyError& error) {
    EXPECT_TRUE(test::contains(error.what(), "'lstm', the first whose time steps read other steps"))
        << error.what();
  }
}

TEST(SequenceLayers, ModelFileKeys) {
  const auto model = parse_model_file(parse_yaml_text(R"(
name: tiny_translator
layers:
  - {name: tokens, op: input, shape: [2, 6]}
  - {name: source, op: embedding, inputs: tokens, vocabulary: 40, dimension: 8}
  - {name: encoder, op: lstm, hidden: 8, bidirectional: true, bias: single}
  - {name: target, op: embedding, inputs: tokens, vocabulary: 40, dimension: 8, channel: 1,
     shared_with: source}
  - {name: decoder, op: lstm, hidden: 16, projection: 8}
  - {name: context, op: attention, inputs: [decoder, encoder], units: 4, normalize: false}
  - {name: logits, op: projection, out_features: 40, bias: false, sampled: 9}
  - {name: loss, op: softmax_cross_entropy}
)",
                                                      "tiny.yaml"));
  EXPECT_EQ(model.layer("encoder").output_shape, (TensorShape{1, 16, {6}}));
  EXPECT_EQ(model.layer("context").output_shape, (TensorShape{1, 16, {6}}));
  EXPECT_EQ(model.layer("logits").output_shape, (TensorShape{1, 10, {6}}));
  const auto& decoder = std::get<LstmParams>(model.layer("decoder").layer.params);
  EXPECT_EQ(decoder.projection, 8);
  EXPECT_EQ(decoder.bias, LstmBias::double_);
  EXPECT_EQ(std::get<EmbeddingParams>(model.layer("target").layer.params).shared_with, "source");
  EXPECT_FALSE(std::get<AttentionParams>(model.layer("context").layer.params).normalize);
  const auto& logits = std::get<ProjectionParams>(model.layer("logits").layer.params);
  EXPECT_EQ(logits.sampled, 9);
  EXPECT_FALSE(logits.bias);
}

}  // namespace
}  // namespace tessera

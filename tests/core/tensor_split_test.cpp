// Tensor parallelism's plan (tensor_split.hpp): Megatron's split of a transformer, the alternating
// filter and channel splits of a CNN, the gathers before layers that need whole channels, each
// GPU's weights and the tensor-group collectives the step program plays.
#include <gtest/gtest.h>

#include "test_support.hpp"

#include <algorithm>

#include "tessera/core/common/input_error.hpp"
#include "tessera/core/common/yaml_reader.hpp"
#include "tessera/core/model/layer_cost.hpp"
#include "tessera/core/model/model_file.hpp"
#include "tessera/core/strategy/step_program.hpp"
#include "tessera/core/zoo/model_zoo.hpp"

namespace tessera {
namespace {

using test::program_test_device;

constexpr std::int64_t kLayers = test::kTinyGpt.layers, kHidden = test::kTinyGpt.hidden,
                       kHeads = test::kTinyGpt.heads, kSteps = test::kTinyGpt.steps,
                       kVocabulary = test::kTinyGpt.vocabulary;

using test::tiny_gpt;

ShardPlan tensor_plan(const ModelGraph& model, std::int64_t tensor, std::int64_t mini_batch = 2) {
  ParallelConfig config;
  config.mini_batch = mini_batch;
  config.tensor = tensor;
  return plan_shards(model, config, "", {});
}

const LayerShard& shard_of(const ModelGraph& model, const ShardPlan& plan,
                           const std::string& name) {
  return plan.layers.at(*model.index_of(name));
}

TEST(TensorSplit, GptSplitsAsMegatronDoes) {
  const auto model = tiny_gpt();
  const auto plan = tensor_plan(model, 2);
  const std::pair<const char*, TensorSplit> expected[] = {
      {"tokens", TensorSplit::replicated},
      {"token_embedding", TensorSplit::vocabulary},
      {"position_embedding", TensorSplit::replicated},
      {"block1_attention_norm", TensorSplit::replicated},
      {"block1_attention", TensorSplit::heads},
      {"block1_attention_residual", TensorSplit::replicated},
      {"block1_mlp_in", TensorSplit::column},
      {"block1_mlp_gelu", TensorSplit::follows},
      {"block1_mlp_out", TensorSplit::row},
      {"block2_mlp_dropout", TensorSplit::replicated},
      {"final_norm", TensorSplit::replicated},
      {"head", TensorSplit::column},
      {"loss", TensorSplit::vocabulary}};
  for (const auto& [name, split] : expected) {
    EXPECT_EQ(shard_of(model, plan, name).tensor.split, split) << name;
  }
  // Nothing needs a gather: every split region closes with a row split or heads.
  for (const auto& shard : plan.layers) {
    EXPECT_TRUE(std::none_of(shard.tensor.gathered_inputs.begin(),
                             shard.tensor.gathered_inputs.end(), [](bool b) { return b; }));
  }
  EXPECT_EQ(shard_of(model, plan, "block1_mlp_in").local_output.c, 4 * kHidden / 2);
  EXPECT_EQ(shard_of(model, plan, "block1_mlp_gelu").local_output.c, 4 * kHidden / 2);
  EXPECT_EQ(shard_of(model, plan, "block1_mlp_out").local_inputs.at(0).c, 4 * kHidden / 2);
  EXPECT_EQ(shard_of(model, plan, "block1_mlp_out").local_output.c, kHidden);
  EXPECT_EQ(shard_of(model, plan, "block1_attention").local_output.c, kHidden);
  EXPECT_EQ(shard_of(model, plan, "loss").local_output.c, kVocabulary / 2);
}

TEST(TensorSplit, EachGpuHoldsItsShareOfTheWeights) {
  const auto model = tiny_gpt();
  const std::int64_t t = 2, c = kHidden, shard = kHidden / t;
  const auto plan = tensor_plan(model, t);
  // Split: Q, K, V and the output projection (4 C C/t, biases 3 C/t + C), the MLP's two
  // products (C 4C/t + 4C/t, then 4C/t C + C), the table's rows. Whole: layer norms, positions.
  const std::int64_t per_block = (4 * c * shard + 3 * shard + c) + (c * 4 * shard + 4 * shard) +
                                 (4 * shard * c + c) + 2 * (2 * c);
  const std::int64_t expected =
      kVocabulary / t * c + kSteps * c + kLayers * per_block + 2 * c;  // + the final norm
  std::int64_t held = 0;
  for (const auto& layer : plan.layers) held += layer.parameters;
  EXPECT_EQ(held, expected);
  // One GPU alone holds the whole model.
  std::int64_t whole = 0;
  for (const auto& layer : tensor_plan(model, 1).layers) whole += layer.parameters;
  EXPECT_EQ(whole, parameter_count(model));
}

TEST(TensorSplit, TheLocalModelIsTheLayersOneGpuRunsInTheModelsOrder) {
  const auto model = tiny_gpt();
  const auto plan = tensor_plan(model, 2);
  std::vector<LayerTensorSplit> splits;
  for (const auto& shard : plan.layers) splits.push_back(shard.tensor);
  const auto local = tensor_local_model(model, splits);
  ASSERT_EQ(local.layers().size(), model.layers().size());
  for (std::size_t i = 0; i < model.layers().size(); ++i) {
    const auto& mine = local.layers()[i];
    EXPECT_EQ(mine.layer.name, model.layers()[i].layer.name);
    EXPECT_EQ(mine.input_indices, model.layers()[i].input_indices) << mine.layer.name;
    // Its shapes are the plan's local ones, per sample.
    EXPECT_EQ(mine.output_shape.c, plan.layers[i].local_output.c) << mine.layer.name;
    EXPECT_EQ(parameter_count(mine), plan.layers[i].parameters) << mine.layer.name;
  }
}

TEST(TensorSplit, AttentionShardCostsItsHeads) {
  const auto model = tiny_gpt();
  const auto plan = tensor_plan(model, 2);
  const auto& shard = shard_of(model, plan, "block1_attention");
  const auto& p = std::get<SelfAttentionParams>(shard.tensor.local_layer.params);
  EXPECT_EQ(p.heads, kHeads / 2);
  EXPECT_EQ(p.tensor_parts, 2);
  const auto cost = layer_cost(shard.tensor.local_layer, shard.local_inputs, shard.local_output, 2,
                               DType::float32);
  const double n = 2, t = kSteps, c = kHidden, s = kHidden / 2.0, h = kHeads / 2.0;
  // Causal, fused, with biases (gpt2's attention).
  EXPECT_DOUBLE_EQ(cost.flops.forward,
                   8 * n * t * c * s + 4 * n * t * t * s + 5 * n * h * t * t + n * t * (3 * s + c));
  EXPECT_DOUBLE_EQ(cost.flops.backward_filter, 8 * n * t * c * s + n * t * (3 * s + c));
}

int count_ops(const StepProgram& program, StepOpKind kind, Direction direction) {
  return static_cast<int>(
      std::count_if(program.ops.begin(), program.ops.end(), [&](const auto& op) {
        return op.kind == kind && op.group == CollectiveGroup::tensor && op.direction == direction;
      }));
}

TEST(TensorSplit, ProgramAllReducesTwicePerBlockEachWay) {
  const auto model = tiny_gpt();
  const auto plan = tensor_plan(model, 2);
  const ComputeCostModel costs{program_test_device(), nullptr, 64.0 * 1024 * 1024};
  const auto program = build_step_programs(model, plan, costs, {}).at(0);
  // Forward: the embedding's rows, each block's attention and MLP, the loss's class sums.
  EXPECT_EQ(count_ops(program, StepOpKind::group_allreduce, Direction::forward),
            1 + 2 * kLayers + 1);
  // Backward: each block's attention and first MLP product, and the head's input gradient.
  EXPECT_EQ(count_ops(program, StepOpKind::group_allreduce, Direction::backward_data),
            2 * kLayers + 1);
  EXPECT_EQ(count_ops(program, StepOpKind::group_allgather, Direction::forward), 0);
  const double activation_bytes = 2.0 * kHidden * kSteps * 4;  // mini-batch 2, float32
  for (const auto& op : program.ops) {
    if (op.group != CollectiveGroup::tensor) continue;
    EXPECT_EQ(op.category, OpCategory::other_communication);
    if (op.label.find("class sums") != std::string::npos) {
      EXPECT_DOUBLE_EQ(op.bytes, 3.0 * 2 * kSteps * 4);  // three floats per position
    } else {
      EXPECT_DOUBLE_EQ(op.bytes, activation_bytes) << op.label;
    }
  }
  // Without a tensor group nothing is played on one.
  const auto alone = build_step_programs(model, tensor_plan(model, 1), costs, {}).at(0);
  EXPECT_TRUE(std::none_of(alone.ops.begin(), alone.ops.end(),
                           [](const auto& op) { return op.group == CollectiveGroup::tensor; }));
  // The update covers the weights this GPU holds.
  std::int64_t held = 0;
  for (const auto& layer : plan.layers) held += layer.parameters;
  EXPECT_DOUBLE_EQ(program.parameters, static_cast<double>(held));
}

ModelGraph model_from(const std::string& layers) {
  return parse_model_file(parse_yaml_text("name: m\nlayers:\n" + layers, "m.yaml"));
}

const std::string kCnn =
    "  - {name: image, op: input, shape: [4, 8, 8]}\n"
    "  - {name: conv1, op: conv, out_channels: 8, kernel: 3, padding: 1}\n"
    "  - {name: bn1, op: batch_norm}\n"
    "  - {name: relu1, op: relu}\n"
    "  - {name: conv2, op: conv, out_channels: 8, kernel: 3, padding: 1}\n"
    "  - {name: relu2, op: relu}\n"
    "  - {name: pool, op: pool, mode: max, kernel: 2, stride: 2}\n"
    "  - {name: fc, op: fully_connected, out_features: 10}\n"
    "  - {name: loss, op: softmax_cross_entropy}\n";

TEST(TensorSplit, ConvolutionsAlternateFilterAndChannelSplits) {
  const auto model = model_from(kCnn);
  const auto plan = tensor_plan(model, 2);
  EXPECT_EQ(shard_of(model, plan, "conv1").tensor.split, TensorSplit::column);
  EXPECT_EQ(shard_of(model, plan, "conv1").local_output.c, 4);
  EXPECT_EQ(shard_of(model, plan, "conv1").parameters, 4 * 4 * 9);
  EXPECT_EQ(shard_of(model, plan, "bn1").tensor.split, TensorSplit::follows);
  EXPECT_EQ(shard_of(model, plan, "bn1").parameters, 2 * 4);
  EXPECT_EQ(shard_of(model, plan, "relu1").tensor.split, TensorSplit::follows);
  EXPECT_EQ(shard_of(model, plan, "conv2").tensor.split, TensorSplit::row);
  EXPECT_EQ(shard_of(model, plan, "conv2").local_inputs.at(0).c, 4);
  EXPECT_EQ(shard_of(model, plan, "conv2").local_output.c, 8);
  EXPECT_EQ(shard_of(model, plan, "conv2").parameters, 4 * 8 * 9);
  EXPECT_EQ(shard_of(model, plan, "pool").tensor.split, TensorSplit::replicated);
  EXPECT_EQ(shard_of(model, plan, "fc").tensor.split, TensorSplit::column);
  EXPECT_EQ(shard_of(model, plan, "loss").tensor.split, TensorSplit::vocabulary);
  // Batch-norm statistics are per channel: each GPU sums its own (no spatial group here).
  const ComputeCostModel costs{program_test_device(), nullptr, 64.0 * 1024 * 1024};
  const auto program = build_step_programs(model, plan, costs, {}).at(0);
  EXPECT_EQ(count_ops(program, StepOpKind::group_allreduce, Direction::forward), 2);  // conv2, loss
  // conv1's input is the image (no gradient); conv2's input gradient comes split: fc alone.
  EXPECT_EQ(count_ops(program, StepOpKind::group_allreduce, Direction::backward_data), 1);
}

TEST(TensorSplit, LayersNeedingWholeChannelsGatherThemFirst) {
  const auto model = model_from(
      "  - {name: tokens, op: input, shape: [1, 8]}\n"
      "  - {name: words, op: embedding, vocabulary: 30, dimension: 16}\n"
      "  - {name: up, op: projection, out_features: 16}\n"
      "  - {name: norm, op: layer_norm}\n"
      "  - {name: out, op: projection, out_features: 30, bias: false, shared_with: words}\n"
      "  - {name: loss, op: softmax_cross_entropy}\n");
  const auto plan = tensor_plan(model, 4, 3);
  const auto& norm = shard_of(model, plan, "norm");
  EXPECT_EQ(norm.tensor.split, TensorSplit::replicated);
  ASSERT_EQ(norm.tensor.gathered_inputs, std::vector<bool>{true});
  EXPECT_EQ(norm.local_inputs.at(0).c, 16);
  const ComputeCostModel costs{program_test_device(), nullptr, 64.0 * 1024 * 1024};
  const auto program = build_step_programs(model, plan, costs, {}).at(0);
  const auto gather = std::find_if(program.ops.begin(), program.ops.end(), [](const auto& op) {
    return op.kind == StepOpKind::group_allgather;
  });
  ASSERT_NE(gather, program.ops.end());
  EXPECT_EQ(gather->group, CollectiveGroup::tensor);
  EXPECT_DOUBLE_EQ(gather->bytes, 3.0 * 16 * 8 * 4);  // the whole input: 3 samples x 16 x 8
  // The vocabulary of 30 splits 4 ways as 8, 8, 7, 7: the busiest GPU holds 8 rows, and the head
  // tied to them scores 8 classes.
  EXPECT_EQ(shard_of(model, plan, "words").parameters, 8 * 16);
  EXPECT_EQ(shard_of(model, plan, "out").local_output.c, 8);
}

TEST(TensorSplit, DegreesThatDoNotDivideWhatIsSplitAreRefusedNamingTheLayer) {
  const auto gpt = tiny_gpt();
  try {
    tensor_plan(gpt, 8);
    FAIL() << "8 does not divide 4 heads";
  } catch (const StrategyError& error) {
    EXPECT_EQ(error.key(), "parallelism.tensor");
    EXPECT_NE(std::string(error.what()).find("block1_attention"), std::string::npos);
    EXPECT_NE(std::string(error.what()).find("heads (4)"), std::string::npos);
  }
  try {
    tensor_plan(model_from(kCnn), 3);
    FAIL() << "3 does not divide 8 filters";
  } catch (const StrategyError& error) {
    EXPECT_EQ(error.key(), "parallelism.tensor");
    EXPECT_NE(std::string(error.what()).find("conv1"), std::string::npos);
  }
}

TEST(TensorSplit, OneGpuLeavesEveryLayerWhole) {
  const auto model = build_zoo_model("cosmoflow", {{"width", "128"}});
  const auto plan = tensor_plan(model, 1, 1);
  for (std::size_t i = 0; i < model.layers().size(); ++i) {
    EXPECT_EQ(plan.layers[i].tensor.split, TensorSplit::replicated);
    EXPECT_EQ(plan.layers[i].parameters, parameter_count(model.layers()[i]));
    EXPECT_EQ(plan.layers[i].local_output.c, model.layers()[i].output_shape.c);
  }
}

}  // namespace
}  // namespace tessera

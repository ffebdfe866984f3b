// Every model family trains exactly in parallel on the real backend: a narrow ResNet, a small
// VGG-like net, an Inception-like block net, a GELU net, a small 3D U-Net (every layer split,
// transposed convolution and skip concatenation included) and CosmoFlow-16, each with data
// parallelism over every rank, a spatial split over every rank, and (on 4 ranks) 2 replicas x a
// 2-way split, give the losses and weights of one rank training the same global batch, within
// float32 rounding, after two momentum steps (the sequence models, a small LSTM, a tiny GNMT, a
// one-block transformer and the zoo's GPT-2 at 2 blocks of 64 with its tied head, with data
// parallelism only); and every rank executes its step program's ops in order. With
// replicas, batch-norm statistics are synchronised across them
// (parallelism.batch_norm_statistics: global): per-replica statistics, the default, differ from
// one rank's by design.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "../kernels/real_training_support.hpp"
#include "mpi_world.hpp"
#include "tessera/core/model/model_file.hpp"

namespace tessera::kernels {
namespace {

using testing::world;

enum class FamilySplit { data, space, both };

struct Family {
  // A file of tests/data/models/families, or "cosmoflow", "tiny_gpt" or "tiny_bert".
  std::string model;
  std::string until;  // the first layer that runs unsplit ("" = none: split to the end)
  std::int64_t mini_batch = 2;
};

struct FamilyCase {
  Family family;
  FamilySplit split = FamilySplit::data;
};

std::ostream& operator<<(std::ostream& out, const FamilyCase& c) {
  return out << c.family.model << "/"
             << (c.split == FamilySplit::data    ? "data"
                 : c.split == FamilySplit::space ? "space"
                                                 : "both");
}

ModelGraph model_of(const Family& family) {
  if (family.model == "cosmoflow") {
    return build_zoo_model("cosmoflow", {{"width", "16"}, {"batch_norm", "true"}});
  }
  // The zoo's GPT-2 or BERT at 2 blocks of 64, 4 heads, the heads tied (BERT's with a bias).
  if (family.model == "tiny_gpt" || family.model == "tiny_bert") {
    return build_zoo_model(family.model == "tiny_gpt" ? "gpt2" : "bert", {{"layers", "2"},
                                                                          {"hidden", "64"},
                                                                          {"heads", "4"},
                                                                          {"sequence_length", "16"},
                                                                          {"vocabulary", "97"}});
  }
  return load_model_file(std::string(TESSERA_TEST_DATA_DIR) + "/models/families/" + family.model +
                         ".yaml");
}

class ModelFamilyOverMpi : public ::testing::TestWithParam<FamilyCase> {};

TEST_P(ModelFamilyOverMpi, MatchesOneRankWithTheSameGlobalBatch) {
  const FamilyCase& c = GetParam();
  const auto ranks = static_cast<std::int64_t>(world().size());
  if (c.split == FamilySplit::both && ranks < 4) GTEST_SKIP() << "2 x 2 needs 4 ranks";
  const auto model = model_of(c.family);
  const auto axes = model.layers().front().output_shape.spatial.size();
  testing::TrainingCase parallel;
  parallel.optimizer = Optimizer::momentum;  // linear in the gradients: rounding stays small
  parallel.steps = 2;                        // the second step starts from the first's momentum
  parallel.dataset_samples = 16;
  parallel.spatial_until = c.family.until;
  parallel.config.mini_batch = c.family.mini_batch;
  parallel.config.spatial_grid.assign(axes, 1);
  const std::int64_t parts = c.split == FamilySplit::data    ? 1
                             : c.split == FamilySplit::space ? ranks
                                                             : 2;
  parallel.config.data = ranks / parts;
  parallel.config.spatial_grid[0] = parts;  // depth of a volume, height of an image
  parallel.global_batch_norm = parallel.config.data > 1;
  testing::TrainingCase alone = parallel;
  alone.config.data = 1;
  alone.config.spatial_grid.assign(axes, 1);
  alone.config.mini_batch = parallel.config.global_batch();

  auto own = world().split(world().rank(), 0);
  const auto reference = testing::train_model(*own, model, alone);
  const auto run = testing::train_model(world(), model, parallel);

  testing::expect_trains_like(run, reference, world().rank());
  EXPECT_EQ(run.last_step.executed, testing::expected_executions(run.program))
      << "rank " << world().rank();
}

std::vector<FamilyCase> cases() {
  const std::vector<Family> families{{"narrow_resnet", "pool"},    {"small_vgg", "fc1"},
                                     {"inception_blocks", "pool"}, {"small_unet3d", ""},
                                     {"gelu_cnn", "fc1"},          {"cosmoflow", "pool2"}};
  std::vector<FamilyCase> all;
  for (const auto& family : families) {
    for (auto split : {FamilySplit::data, FamilySplit::space, FamilySplit::both})
      all.push_back({family, split});
  }
  // Sequence models: data parallelism only (their layers read every step, so no spatial split).
  all.push_back({{"small_lstm", "embedding"}, FamilySplit::data});
  all.push_back({{"sampled_lstm", "embedding"}, FamilySplit::data});
  all.push_back({{"tiny_gnmt", "source_embedding"}, FamilySplit::data});
  all.push_back({{"small_transformer", "embedding"}, FamilySplit::data});
  all.push_back({{"tiny_gpt", "token_embedding"}, FamilySplit::data});
  all.push_back({{"tiny_bert", "word_embedding"}, FamilySplit::data});
  return all;
}

INSTANTIATE_TEST_SUITE_P(Families, ModelFamilyOverMpi, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<FamilyCase>& param) {
                           std::string name = param.param.family.model + "_";
                           name += param.param.split == FamilySplit::data    ? "data"
                                   : param.param.split == FamilySplit::space ? "space"
                                                                             : "both";
                           return name;
                         });

}  // namespace
}  // namespace tessera::kernels

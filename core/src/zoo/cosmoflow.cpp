// CosmoFlow as trained with hybrid data + spatial parallelism (Oyama et al., 2020; LBANN model),
// and the MLPerf HPC variant. Layer facts: seven 3^3 convolutions without bias, each followed by
// LeakyReLU(0.01) and, while the volume is larger than 2^3, an average pool 3/2/1; three fully
// connected layers behind dropout (keep 0.8). 9,437,636 parameters at every width.
#include <bit>

#include "tessera/core/model/graph_builder.hpp"
#include "zoo_models.hpp"

namespace tessera::zoo {
namespace {

constexpr double kLeakySlope = 0.01;

ModelGraph build_lbann2020(std::int64_t width, bool with_batch_norm) {
  GraphBuilder b("cosmoflow");
  auto x = b.input("input", 4, {width, width, width});
  const std::int64_t filters[] = {16, 32, 64, 128, 256, 256, 256};
  // One pool per halving until the volume reaches 2^3 after conv7 (conv4 also halves it):
  // 5 pools at width 128, 6 at 256, 7 at 512.
  const int pools = std::countr_zero(static_cast<std::uint64_t>(width)) - 2;
  for (int i = 1; i <= 7; ++i) {
    const auto id = std::to_string(i);
    x = b.conv("conv" + id, x, conv_params(filters[i - 1], 3, i == 4 ? 2 : 1, 1));
    if (with_batch_norm) x = b.batch_norm("bn" + id, x);
    x = b.leaky_relu("act" + id, x, kLeakySlope);
    if (i <= pools) {
      x = b.pool(
          "pool" + id, x,
          PoolingParams{.mode = PoolMode::average, .kernel = {3}, .stride = {2}, .padding = {1}});
    }
  }
  const std::int64_t widths[] = {2048, 256, 4};
  for (int i = 1; i <= 3; ++i) {
    const auto id = std::to_string(i);
    x = b.dropout("drop" + id, x, 0.2);
    x = b.fully_connected("fc" + id, x, widths[i - 1]);
    if (i < 3) x = b.leaky_relu("fc" + id + "_act", x, kLeakySlope);
  }
  b.mse_loss("loss", x);
  auto model = std::move(b).build();
  model.set_default_mini_batch(1);
  return model;
}

// MLPerf HPC CosmoFlow: five 3^3 "same" convolutions with bias, 32..512 filters, each followed by
// LeakyReLU and max-pool 2^3; dense 128 -> 64 -> 4 behind dropout 0.5 (8,907,556 parameters at
// width 128). The final 1.2*tanh scaling has no parameters and is folded into the loss here.
ModelGraph build_mlperf(std::int64_t width) {
  GraphBuilder b("cosmoflow");
  auto x = b.input("input", 4, {width, width, width});
  for (int i = 1; i <= 5; ++i) {
    const auto id = std::to_string(i);
    x = b.conv("conv" + id, x, conv_params(16LL << i, 3, 1, 1, true));
    x = b.leaky_relu("act" + id, x, 0.3);
    x = b.pool("pool" + id, x, PoolingParams{.mode = PoolMode::max});
  }
  x = b.fully_connected("fc1", x, 128);
  x = b.leaky_relu("fc1_act", x, 0.3);
  x = b.dropout("drop1", x, 0.5);
  x = b.fully_connected("fc2", x, 64);
  x = b.leaky_relu("fc2_act", x, 0.3);
  x = b.dropout("drop2", x, 0.5);
  x = b.fully_connected("fc3", x, 4);
  b.mse_loss("loss", x);
  auto model = std::move(b).build();
  model.set_default_mini_batch(1);
  return model;
}

}  // namespace

ZooModel cosmoflow() {
  return {.name = "cosmoflow",
          .summary = "3D CNN regressing 4 cosmological parameters from a 4-channel density volume",
          .definition = "LBANN CosmoFlow of Oyama et al. (2020); variant mlperf: MLPerf HPC v1.0",
          .options = {{.name = "width",
                       .type = OptionType::integer,
                       .default_value = "128",
                       .allowed = {"16", "32", "64", "128", "256", "512"},
                       .help = "input volume edge in voxels (4 x W^3)"},
                      {.name = "batch_norm",
                       .type = OptionType::boolean,
                       .default_value = "false",
                       .help = "batch-norm after every convolution (lbann2020 only)"},
                      {.name = "variant",
                       .type = OptionType::choice,
                       .default_value = "lbann2020",
                       .allowed = {"lbann2020", "mlperf"},
                       .help = "which published CosmoFlow"}},
          .build = [](const ModelOptions& o) {
            if (o.text("variant") == "mlperf") return build_mlperf(o.integer("width"));
            return build_lbann2020(o.integer("width"), o.boolean("batch_norm"));
          }};
}

}  // namespace tessera::zoo

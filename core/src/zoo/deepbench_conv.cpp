// The 94 training convolutions of Baidu's DeepBench, each a one-layer model. The table ships in
// core/data/deepbench_conv_train.csv (columns in DeepBench's order) and is compiled in.
#include <charconv>
#include <sstream>
#include <stdexcept>

#include "tessera/core/common/embedded_files.hpp"
#include "tessera/core/model/graph_builder.hpp"
#include "tessera/core/zoo/model_zoo.hpp"
#include "zoo_models.hpp"

namespace tessera::zoo {
namespace {

constexpr std::string_view kTablePath = "core/data/deepbench_conv_train.csv";

struct Problem {
  std::int64_t w, h, c, n, k, s, r, pad_w, pad_h, stride_w, stride_h;
  std::string source;
};

std::vector<Problem> load_problems() {
  auto text = embedded_file(kTablePath);
  if (!text) throw std::logic_error("DeepBench table is not compiled in");
  std::istringstream lines{std::string(*text)};
  std::string line;
  std::getline(lines, line);  // header
  std::vector<Problem> problems;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    std::vector<std::string> fields;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) fields.push_back(cell);
    if (fields.size() != 13) throw std::logic_error("malformed DeepBench row: " + line);
    std::int64_t v[11];
    for (int i = 0; i < 11; ++i) {
      const auto& f = fields[static_cast<std::size_t>(i) + 1];
      std::from_chars(f.data(), f.data() + f.size(), v[i]);
    }
    problems.push_back(
        {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], fields[12]});
  }
  return problems;
}

const std::vector<Problem>& problems() {
  static const std::vector<Problem> table = load_problems();
  return table;
}

ModelGraph build_deepbench_conv(std::int64_t index) {
  const auto& p = problems().at(static_cast<std::size_t>(index));
  GraphBuilder b("deepbench_conv");
  auto x = b.input("input", p.c, {p.h, p.w});
  ConvolutionParams conv;
  conv.out_channels = p.k;
  conv.kernel = {p.r, p.s};
  conv.stride = {p.stride_h, p.stride_w};
  conv.padding = {p.pad_h, p.pad_w};
  x = b.conv("conv", x, conv);
  // A loss gives backward its output gradient, as a benchmark's random one would; the real
  // backend trains the convolution toward zero output (no learning is studied here).
  b.mse_loss("loss", x);
  auto model = std::move(b).build();
  model.set_default_mini_batch(p.n);
  return model;
}

}  // namespace

ZooModel deepbench_conv() {
  const auto count = static_cast<std::int64_t>(problems().size());
  return {
      .name = "deepbench_conv",
      .summary =
          "one DeepBench training convolution (" + std::to_string(count) +
          " problems) as a one-layer model with a loss; mini-batch defaults to the problem's N",
      .definition = "Baidu DeepBench conv training set (W,H,C,N,K,S,R,pad,stride)",
      .options = {{.name = "problem",
                   .type = OptionType::integer,
                   .default_value = "0",
                   .minimum = 0,
                   .maximum = count - 1,
                   .help = "row of the DeepBench training table"}},
      .build = [](const ModelOptions& o) { return build_deepbench_conv(o.integer("problem")); }};
}

}  // namespace tessera::zoo

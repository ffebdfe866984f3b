// CPU sequence kernels (LSTM with and without projection, one and two directions; embedding;
// projection; normalised attention) against plain references of their definitions
// (sequence_kernels.hpp) and, for backward, central differences of the forward.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "cpu/cpu_sequence_kernels.hpp"
#include "gradient_check.hpp"

namespace tessera::kernels {
namespace {

using testing::central_differences;
using testing::expect_gradient_matches;
using testing::random_values;
using testing::weighted_sum;

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

struct LstmCase {
  LstmShape shape;
  std::vector<float> x, input, recurrent, bias, projection;
};

LstmCase lstm_case(LstmShape s, std::uint32_t seed) {
  const std::int64_t d = s.directions(), h = s.hidden;
  return {s,
          random_values(s.batch * s.input * s.steps, seed),
          random_values(d * s.input * 4 * h, seed + 1, -0.5F, 0.5F),
          random_values(d * s.recurrent() * 4 * h, seed + 2, -0.5F, 0.5F),
          random_values(d * 4 * h, seed + 3, -0.5F, 0.5F),
          random_values(d * h * s.projection, seed + 4, -0.5F, 0.5F)};
}

LstmWeights weights_of(const LstmCase& c) {
  return {c.input.data(), c.recurrent.data(), c.bias.data(),
          c.shape.projection > 0 ? c.projection.data() : nullptr};
}

// The LSTM's definition, step by step in double: gates i, f, g, o; c = f c + i g;
// h = o tanh(c), projected by P where there is one; the backward direction from the last step.
std::vector<double> reference_lstm(const LstmCase& c) {
  const auto& s = c.shape;
  const std::int64_t h = s.hidden, r = s.recurrent(), out = s.output_channels();
  std::vector<double> y(static_cast<std::size_t>(s.batch * out * s.steps));
  for (std::int64_t d = 0; d < s.directions(); ++d) {
    for (std::int64_t n = 0; n < s.batch; ++n) {
      std::vector<double> state(static_cast<std::size_t>(r), 0.0), cell(h, 0.0);
      for (std::int64_t step = 0; step < s.steps; ++step) {
        const std::int64_t t = d == 0 ? step : s.steps - 1 - step;
        std::vector<double> gates(static_cast<std::size_t>(4 * h));
        for (std::int64_t g = 0; g < 4 * h; ++g) {
          double sum = c.bias[d * 4 * h + g];
          for (std::int64_t i = 0; i < s.input; ++i)
            sum += double(c.x[(n * s.input + i) * s.steps + t]) *
                   c.input[(d * s.input + i) * 4 * h + g];
          for (std::int64_t j = 0; j < r; ++j)
            sum += state[j] * c.recurrent[(d * r + j) * 4 * h + g];
          gates[g] = sum;
        }
        std::vector<double> hidden(h);
        for (std::int64_t u = 0; u < h; ++u) {
          cell[u] =
              sigmoid(gates[h + u]) * cell[u] + sigmoid(gates[u]) * std::tanh(gates[2 * h + u]);
          hidden[u] = sigmoid(gates[3 * h + u]) * std::tanh(cell[u]);
        }
        for (std::int64_t j = 0; j < r; ++j) {
          double value = hidden[j < h ? j : 0];
          if (s.projection > 0) {
            value = 0;
            for (std::int64_t u = 0; u < h; ++u)
              value += hidden[u] * c.projection[(d * h + u) * s.projection + j];
          }
          state[j] = value;
          y[(n * out + d * r + j) * s.steps + t] = value;
        }
      }
    }
  }
  return y;
}

class CpuLstm : public ::testing::TestWithParam<LstmShape> {};

TEST_P(CpuLstm, ForwardFollowsTheDefinition) {
  const auto c = lstm_case(GetParam(), 20);
  CpuSequenceKernels kernels;
  std::vector<float> workspace(kernels.lstm_workspace_floats(c.shape));
  std::vector<float> y(
      static_cast<std::size_t>(c.shape.batch * c.shape.output_channels() * c.shape.steps));
  kernels.lstm_forward(c.shape, c.x.data(), weights_of(c), y.data(), workspace.data());
  const auto expected = reference_lstm(c);
  for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], expected[i], 1e-5) << i;
}

TEST_P(CpuLstm, BackwardMatchesCentralDifferences) {
  auto c = lstm_case(GetParam(), 30);
  const auto& s = c.shape;
  CpuSequenceKernels kernels;
  std::vector<float> workspace(kernels.lstm_workspace_floats(s));
  std::vector<float> y(static_cast<std::size_t>(s.batch * s.output_channels() * s.steps));
  const auto dy = random_values(y.size(), 35);
  const auto loss = [&] {
    kernels.lstm_forward(s, c.x.data(), weights_of(c), y.data(), workspace.data());
    return weighted_sum(y, dy);
  };
  loss();
  std::vector<float> dx(c.x.size()), dinput(c.input.size()), drecurrent(c.recurrent.size()),
      dbias(c.bias.size()), dprojection(c.projection.size());
  // Gradients are overwritten, not added to.
  std::fill(dinput.begin(), dinput.end(), 5.0F);
  kernels.lstm_backward(s, weights_of(c), workspace.data(), dy.data(), dx.data(),
                        {dinput.data(), drecurrent.data(), dbias.data(),
                         s.projection > 0 ? dprojection.data() : nullptr});
  expect_gradient_matches(dx, central_differences(c.x, loss, 1e-2F), 2e-3, "lstm dx");
  expect_gradient_matches(dinput, central_differences(c.input, loss, 1e-2F), 2e-3, "dW input");
  expect_gradient_matches(drecurrent, central_differences(c.recurrent, loss, 1e-2F), 2e-3,
                          "dW recurrent");
  expect_gradient_matches(dbias, central_differences(c.bias, loss, 1e-2F), 2e-3, "db");
  if (s.projection > 0) {
    expect_gradient_matches(dprojection, central_differences(c.projection, loss, 1e-2F), 2e-3,
                            "dW projection");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CpuLstm,
    ::testing::Values(LstmShape{.batch = 2, .steps = 4, .input = 3, .hidden = 5},
                      LstmShape{.batch = 2, .steps = 3, .input = 3, .hidden = 6, .projection = 2},
                      LstmShape{
                          .batch = 3, .steps = 3, .input = 2, .hidden = 4, .bidirectional = true}),
    [](const ::testing::TestParamInfo<LstmShape>& param) {
      return std::string(param.param.bidirectional    ? "bidirectional"
                         : param.param.projection > 0 ? "projected"
                                                      : "plain");
    });

TEST(CpuEmbedding, LooksUpItsStreamAndAddsGradientsAtRepeatedTokens) {
  const std::int64_t batch = 2, channels = 2, steps = 3, vocabulary = 4, dimension = 2;
  // Channel 1 is the stream looked up; token 3 occurs twice.
  const std::vector<float> tokens{9, 9, 9, 3, 0, 3, 9, 9, 9, 1, 2, 1};
  const auto table = random_values(vocabulary * dimension, 40);
  CpuSequenceKernels kernels;
  std::vector<float> y(batch * dimension * steps);
  EXPECT_THROW(kernels.embedding_forward(batch, channels, steps, 0, TableRows::whole(vocabulary),
                                         dimension, tokens.data(), table.data(), y.data()),
               std::invalid_argument);  // channel 0 holds 9, outside the vocabulary
  kernels.embedding_forward(batch, channels, steps, 1, TableRows::whole(vocabulary), dimension,
                            tokens.data(), table.data(), y.data());
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t t = 0; t < steps; ++t)
      for (std::int64_t d = 0; d < dimension; ++d) {
        const auto token = static_cast<std::int64_t>(tokens[(n * channels + 1) * steps + t]);
        EXPECT_EQ(y[(n * dimension + d) * steps + t], table[token * dimension + d]);
      }
  const auto dy = random_values(y.size(), 41);
  std::vector<float> dtable(table.size(), 7.0F);
  kernels.embedding_backward(batch, channels, steps, 1, TableRows::whole(vocabulary), dimension,
                             tokens.data(), dy.data(), dtable.data(), 0.0F);
  for (std::int64_t d = 0; d < dimension; ++d) {
    EXPECT_FLOAT_EQ(dtable[3 * dimension + d],
                    dy[(0 * dimension + d) * steps + 0] + dy[(0 * dimension + d) * steps + 2]);
    EXPECT_FLOAT_EQ(dtable[1 * dimension + d],
                    dy[(1 * dimension + d) * steps + 0] + dy[(1 * dimension + d) * steps + 2]);
    EXPECT_FLOAT_EQ(dtable[0 * dimension + d], dy[(0 * dimension + d) * steps + 1]);
  }
  auto added = dtable;
  kernels.embedding_backward(batch, channels, steps, 1, TableRows::whole(vocabulary), dimension,
                             tokens.data(), dy.data(), added.data(), 1.0F);
  for (std::size_t i = 0; i < added.size(); ++i) EXPECT_FLOAT_EQ(added[i], 2 * dtable[i]);
}

TEST(CpuEmbedding, ATableSplitByRowsGivesZeroRowsForTokensHeldElsewhere) {
  const std::int64_t batch = 1, steps = 4, dimension = 2;
  const std::vector<float> tokens{0, 3, 4, 2};
  const TableRows rows{.vocabulary = 6, .first = 2, .count = 2};  // rows 2 and 3 of 6
  const auto table = random_values(rows.count * dimension, 43);
  CpuSequenceKernels kernels;
  std::vector<float> y(batch * dimension * steps, 5.0F);
  kernels.embedding_forward(batch, 1, steps, 0, rows, dimension, tokens.data(), table.data(),
                            y.data());
  for (std::int64_t d = 0; d < dimension; ++d) {
    EXPECT_EQ(y[d * steps + 0], 0.0F);  // token 0 is held elsewhere
    EXPECT_EQ(y[d * steps + 1], table[1 * dimension + d]);
    EXPECT_EQ(y[d * steps + 2], 0.0F);
    EXPECT_EQ(y[d * steps + 3], table[0 * dimension + d]);
  }
  const auto dy = random_values(y.size(), 44);
  std::vector<float> dtable(table.size(), 7.0F);
  kernels.embedding_backward(batch, 1, steps, 0, rows, dimension, tokens.data(), dy.data(),
                             dtable.data(), 0.0F);
  for (std::int64_t d = 0; d < dimension; ++d) {
    EXPECT_EQ(dtable[0 * dimension + d], dy[d * steps + 3]);
    EXPECT_EQ(dtable[1 * dimension + d], dy[d * steps + 1]);
  }
  const std::vector<float> outside{6};
  EXPECT_THROW(kernels.embedding_forward(1, 1, 1, 0, rows, dimension, outside.data(), table.data(),
                                         y.data()),
               std::invalid_argument);
}

TEST(CpuPositionEmbedding, AddsRowTAtStepTAndSumsTheGradientOverTheBatch) {
  constexpr std::int64_t batch = 2, dimension = 3, steps = 4, positions = 6;
  const auto table = random_values(positions * dimension, 41);
  const auto x = random_values(batch * dimension * steps, 42);
  std::vector<float> y(x.size());
  CpuSequenceKernels kernels;
  kernels.position_embedding_forward(batch, dimension, steps, table.data(), x.data(), y.data());
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t d = 0; d < dimension; ++d)
      for (std::int64_t t = 0; t < steps; ++t) {
        const std::size_t i = (n * dimension + d) * steps + t;
        EXPECT_FLOAT_EQ(y[i], x[i] + table[t * dimension + d]);
      }
  std::vector<float> dtable(table.size(), 5.0f);
  kernels.position_embedding_backward(batch, dimension, steps, positions, x.data(), dtable.data(),
                                      0.0f);
  for (std::int64_t t = 0; t < positions; ++t)
    for (std::int64_t d = 0; d < dimension; ++d) {
      float expected = 0.0f;
      for (std::int64_t n = 0; n < batch && t < steps; ++n) {
        expected += x[(n * dimension + d) * steps + t];
      }
      EXPECT_FLOAT_EQ(dtable[t * dimension + d], expected) << "row " << t;  // unused rows 0
    }
  EXPECT_THROW(kernels.position_embedding_backward(batch, dimension, positions + 1, positions,
                                                   x.data(), dtable.data(), 0.0f),
               std::invalid_argument);
}

TEST(CpuProjection, ForwardIsTheMapAtEveryStepAndBackwardMatchesCentralDifferences) {
  const std::int64_t batch = 2, in = 3, out = 4, steps = 5;
  auto x = random_values(batch * in * steps, 50);
  auto w = random_values(out * in, 51);
  auto b = random_values(out, 52);
  CpuSequenceKernels kernels;
  std::vector<float> y(batch * out * steps);
  kernels.projection_forward(batch, in, out, steps, x.data(), w.data(), b.data(), y.data());
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t o = 0; o < out; ++o)
      for (std::int64_t t = 0; t < steps; ++t) {
        double expected = b[o];
        for (std::int64_t i = 0; i < in; ++i)
          expected += double(w[o * in + i]) * x[(n * in + i) * steps + t];
        EXPECT_NEAR(y[(n * out + o) * steps + t], expected, 1e-5);
      }
  const auto dy = random_values(y.size(), 53);
  const auto loss = [&] {
    kernels.projection_forward(batch, in, out, steps, x.data(), w.data(), b.data(), y.data());
    return weighted_sum(y, dy);
  };
  std::vector<float> dx(x.size()), dw(w.size(), 3.0F), db(b.size());
  kernels.projection_backward_data(batch, in, out, steps, dy.data(), w.data(), dx.data());
  kernels.projection_backward_weights(batch, in, out, steps, x.data(), dy.data(), dw.data(),
                                      db.data(), 0.0F);
  expect_gradient_matches(dx, central_differences(x, loss, 1e-2F), 1e-3, "projection dx");
  expect_gradient_matches(dw, central_differences(w, loss, 1e-2F), 1e-3, "projection dw");
  // beta 1 adds (a head tied to an embedding adds into the table's gradient).
  std::vector<float> twice = dw;
  kernels.projection_backward_weights(batch, in, out, steps, x.data(), dy.data(), twice.data(),
                                      nullptr, 1.0F);
  for (std::size_t i = 0; i < dw.size(); ++i) EXPECT_NEAR(twice[i], 2 * dw[i], 1e-5) << i;
  expect_gradient_matches(db, central_differences(b, loss, 1e-2F), 1e-3, "projection db");
  // The bias alone (a tied head's own, beside a table it adds into): overwritten, not added.
  std::vector<float> bias_only(b.size(), 7.0F);
  kernels.projection_backward_bias(batch, out, steps, dy.data(), bias_only.data());
  for (std::size_t o = 0; o < db.size(); ++o) EXPECT_FLOAT_EQ(bias_only[o], db[o]) << o;
}

// The sampled softmax's scores: each position's rows of w (repeated ids included), less their
// offsets; gradients land on those rows only.
TEST(CpuGatheredProjection, ScoresTheChosenRowsAndBackwardMatchesCentralDifferences) {
  const std::int64_t batch = 2, in = 3, out = 6, rows = 3, steps = 2;
  auto x = random_values(batch * in * steps, 60);
  auto w = random_values(out * in, 61);
  auto b = random_values(out, 62);
  const std::vector<std::int32_t> ids{0, 5, 2, 2, 4, 4, 1, 3, 2, 2, 4, 0};  // N x rows x T
  const auto offsets = random_values(ids.size(), 63);
  CpuSequenceKernels kernels;
  std::vector<float> y(ids.size());
  kernels.gathered_projection_forward(batch, in, rows, steps, x.data(), w.data(), b.data(), ids,
                                      offsets, y.data());
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t k = 0; k < rows; ++k)
      for (std::int64_t t = 0; t < steps; ++t) {
        const auto at = static_cast<std::size_t>((n * rows + k) * steps + t);
        double expected = double(b[ids[at]]) - offsets[at];
        for (std::int64_t i = 0; i < in; ++i)
          expected += double(w[ids[at] * in + i]) * x[(n * in + i) * steps + t];
        EXPECT_NEAR(y[at], expected, 1e-5);
      }
  const auto dy = random_values(y.size(), 64);
  const auto loss = [&] {
    kernels.gathered_projection_forward(batch, in, rows, steps, x.data(), w.data(), b.data(), ids,
                                        offsets, y.data());
    return weighted_sum(y, dy);
  };
  std::vector<float> dx(x.size(), 5.0F), dw(w.size(), 3.0F), db(b.size(), 3.0F);
  kernels.gathered_projection_backward_data(batch, in, rows, steps, dy.data(), w.data(), ids,
                                            dx.data());
  kernels.gathered_projection_backward_weights(batch, in, out, rows, steps, x.data(), dy.data(),
                                               ids, dw.data(), db.data());
  expect_gradient_matches(dx, central_differences(x, loss, 1e-2F), 1e-3, "gathered dx");
  expect_gradient_matches(dw, central_differences(w, loss, 1e-2F), 1e-3, "gathered dw");
  expect_gradient_matches(db, central_differences(b, loss, 1e-2F), 1e-3, "gathered db");
}

struct AttentionCase {
  AttentionShape shape;
  std::vector<float> query, memory, wq, wk, v, bias, gain;
  AttentionWeights weights() const {
    return {wq.data(), wk.data(), v.data(), shape.normalize ? bias.data() : nullptr,
            shape.normalize ? gain.data() : nullptr};
  }
};

AttentionCase attention_case(bool normalize) {
  AttentionShape s{.batch = 2,
                   .query_channels = 3,
                   .query_steps = 3,
                   .memory_channels = 4,
                   .memory_steps = 5,
                   .units = 3,
                   .normalize = normalize};
  return {s,
          random_values(s.batch * s.query_channels * s.query_steps, 60),
          random_values(s.batch * s.memory_channels * s.memory_steps, 61),
          random_values(s.units * s.query_channels, 62),
          random_values(s.units * s.memory_channels, 63),
          random_values(s.units, 64),
          random_values(s.units, 65),
          {0.8F}};
}

// MLPerf GNMT's BahdanauAttention, written out in double.
std::vector<double> reference_attention(const AttentionCase& c) {
  const auto& s = c.shape;
  const std::int64_t u_count = s.units;
  double norm = 0;
  for (float value : c.v) norm += double(value) * value;
  norm = std::sqrt(norm);
  std::vector<double> context(
      static_cast<std::size_t>(s.batch * s.memory_channels * s.query_steps));
  for (std::int64_t n = 0; n < s.batch; ++n) {
    for (std::int64_t t = 0; t < s.query_steps; ++t) {
      std::vector<double> scores(s.memory_steps);
      for (std::int64_t m = 0; m < s.memory_steps; ++m) {
        double score = 0;
        for (std::int64_t u = 0; u < u_count; ++u) {
          double sum = s.normalize ? c.bias[u] : 0.0;
          for (std::int64_t i = 0; i < s.query_channels; ++i)
            sum += double(c.wq[u * s.query_channels + i]) *
                   c.query[(n * s.query_channels + i) * s.query_steps + t];
          for (std::int64_t i = 0; i < s.memory_channels; ++i)
            sum += double(c.wk[u * s.memory_channels + i]) *
                   c.memory[(n * s.memory_channels + i) * s.memory_steps + m];
          const double v = s.normalize ? c.gain[0] * c.v[u] / norm : c.v[u];
          score += v * std::tanh(sum);
        }
        scores[m] = score;
      }
      double total = 0;
      for (double& score : scores) total += (score = std::exp(score));
      for (std::int64_t i = 0; i < s.memory_channels; ++i) {
        double sum = 0;
        for (std::int64_t m = 0; m < s.memory_steps; ++m)
          sum += scores[m] / total * c.memory[(n * s.memory_channels + i) * s.memory_steps + m];
        context[(n * s.memory_channels + i) * s.query_steps + t] = sum;
      }
    }
  }
  return context;
}

class CpuAttention : public ::testing::TestWithParam<bool> {};

TEST_P(CpuAttention, ForwardFollowsTheDefinitionAndBackwardMatchesCentralDifferences) {
  auto c = attention_case(GetParam());
  const auto& s = c.shape;
  CpuSequenceKernels kernels;
  std::vector<float> workspace(kernels.attention_workspace_floats(s));
  std::vector<float> context(s.batch * s.memory_channels * s.query_steps);
  kernels.attention_forward(s, c.query.data(), c.memory.data(), c.weights(), context.data(),
                            workspace.data());
  const auto expected = reference_attention(c);
  for (std::size_t i = 0; i < context.size(); ++i) EXPECT_NEAR(context[i], expected[i], 1e-5);

  const auto dcontext = random_values(context.size(), 66);
  const auto loss = [&] {
    kernels.attention_forward(s, c.query.data(), c.memory.data(), c.weights(), context.data(),
                              workspace.data());
    return weighted_sum(context, dcontext);
  };
  loss();
  std::vector<float> dquery(c.query.size()), dmemory(c.memory.size(), 9.0F), dwq(c.wq.size()),
      dwk(c.wk.size()), dv(c.v.size()), dbias(c.bias.size()), dgain(1);
  kernels.attention_backward(s, c.query.data(), c.memory.data(), c.weights(), workspace.data(),
                             dcontext.data(), dquery.data(), dmemory.data(),
                             {dwq.data(), dwk.data(), dv.data(), dbias.data(), dgain.data()});
  expect_gradient_matches(dquery, central_differences(c.query, loss, 1e-2F), 1e-3, "dquery");
  expect_gradient_matches(dmemory, central_differences(c.memory, loss, 1e-2F), 1e-3, "dmemory");
  expect_gradient_matches(dwq, central_differences(c.wq, loss, 1e-2F), 1e-3, "dWq");
  expect_gradient_matches(dwk, central_differences(c.wk, loss, 1e-2F), 1e-3, "dWk");
  expect_gradient_matches(dv, central_differences(c.v, loss, 1e-2F), 1e-3, "dv");
  if (s.normalize) {
    expect_gradient_matches(dbias, central_differences(c.bias, loss, 1e-2F), 1e-3, "dbias");
    expect_gradient_matches(dgain, central_differences(c.gain, loss, 1e-2F), 1e-3, "dgain");
  }
}

INSTANTIATE_TEST_SUITE_P(Normalised, CpuAttention, ::testing::Bool());

}  // namespace
}  // namespace tessera::kernels

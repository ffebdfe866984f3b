#include "kind_checks.hpp"

#include <functional>
#include <numeric>

#include "tessera/core/model/model_graph.hpp"
#include "tessera/core/model/shape_inference.hpp"

namespace tessera::kinds {

void require(bool condition, const Layer& layer, const std::string& problem) {
  if (!condition) throw ModelError(layer.name, problem);
}

void require_input_count(const Layer& layer, const std::vector<TensorShape>& inputs,
                         std::size_t minimum, std::size_t maximum) {
  if (inputs.size() >= minimum && inputs.size() <= maximum) return;
  std::string expected =
      minimum == maximum ? std::to_string(minimum) : "at least " + std::to_string(minimum);
  throw ModelError(layer.name, to_string(layer.kind) + " takes " + expected + " input(s), got " +
                                   std::to_string(inputs.size()));
}

void require_spatial(const Layer& layer, const TensorShape& input) {
  require(input.spatial_rank() >= 1, layer,
          to_string(layer.kind) + " needs a spatial input, got " + to_string(input) +
              " (a fully connected output has no spatial axes)");
}

void require_sequence(const Layer& layer, const TensorShape& input, const std::string& role) {
  require(input.spatial_rank() == 1, layer,
          to_string(layer.kind) + " needs a sequence N x C x T (one spatial axis, time) as its " +
              role + ", got " + to_string(input));
}

AxisValues read_axis_values(const YamlMap& map, const std::string& key, AxisValues fallback,
                            std::int64_t minimum) {
  auto value = map.optional(key);
  if (!value) return fallback;
  constexpr std::int64_t kMaxWindow = 4096;  // kernels, strides, paddings, dilations
  if (value->is_sequence()) return value->as_integer_list(1, 3, minimum, kMaxWindow);
  return {value->as_integer(minimum, kMaxWindow)};
}

std::string axes_text(const AxisValues& values) {
  std::string text;
  for (std::size_t i = 0; i < values.size(); ++i) {
    text += (i ? "x" : "") + std::to_string(values[i]);
  }
  return text;
}

void expand_each(const Layer& layer, int rank, std::initializer_list<NamedAxisValues> values) {
  for (const auto& [axis_values, key] : values) {
    *axis_values = expand_axes(*axis_values, rank, layer.name, key);
  }
}

void require_window_fits(const Layer& layer, const TensorShape& input, int axis,
                         std::int64_t extent) {
  const int rank = input.spatial_rank();
  require(extent > 0, layer,
          "output extent along axis " + spatial_axis_names(rank)[axis] + " would be " +
              std::to_string(extent) + " for input " + to_string(input));
}

nlohmann::json window_json(const AxisValues& kernel, const AxisValues& stride,
                           const AxisValues& padding) {
  return {{"kernel", kernel}, {"stride", stride}, {"padding", padding}};
}

std::int64_t product(const std::vector<std::int64_t>& values) {
  return std::accumulate(values.begin(), values.end(), std::int64_t{1},
                         std::multiplies<std::int64_t>());
}

}  // namespace tessera::kinds

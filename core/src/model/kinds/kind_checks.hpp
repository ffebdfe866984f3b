#pragma once
// The checks and readers the layer kinds' rules share: input counts, spatial and sequence
// inputs, per-axis values in model files, and the widths a model file may give.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/core/common/tensor_shape.hpp"
#include "tessera/core/common/yaml_reader.hpp"
#include "tessera/core/model/layer.hpp"

namespace tessera::kinds {

// Widths of layers and vocabularies a model file may give: 2^20 units, 2^24 tokens or
// features (LM1B has 793,471 tokens).
inline constexpr std::int64_t kMaxUnits = 1 << 20;
inline constexpr std::int64_t kMaxVocabulary = 1 << 24;

// Throws ModelError naming the layer with `problem` unless `condition` holds.
void require(bool condition, const Layer& layer, const std::string& problem);
void require_input_count(const Layer& layer, const std::vector<TensorShape>& inputs,
                         std::size_t minimum, std::size_t maximum);
void require_spatial(const Layer& layer, const TensorShape& input);
// A sequence has exactly one spatial axis, time; `role` names the input ("query (first input)").
void require_sequence(const Layer& layer, const TensorShape& input, const std::string& role);

// One value for every spatial axis, or a list of one per axis; `fallback` when absent.
AxisValues read_axis_values(const YamlMap& map, const std::string& key, AxisValues fallback,
                            std::int64_t minimum);
std::string axes_text(const AxisValues& values);  // "3x3x3"
// A sliding window's kernel, stride and padding as `describe --json` writes them.
nlohmann::json window_json(const AxisValues& kernel, const AxisValues& stride,
                           const AxisValues& padding);

// Expands each per-axis value, named as in model files, to `rank` axes (one value broadcasts).
struct NamedAxisValues {
  AxisValues* values;
  const char* key;
};
void expand_each(const Layer& layer, int rank, std::initializer_list<NamedAxisValues> values);
// A sliding window's output extent along `axis` of `input` must be positive.
void require_window_fits(const Layer& layer, const TensorShape& input, int axis,
                         std::int64_t extent);

std::int64_t product(const std::vector<std::int64_t>& values);

}  // namespace tessera::kinds

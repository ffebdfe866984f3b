#pragma once
// Data files compiled into the binary (cluster presets, the DeepBench table), so the built-in
// defaults work from any directory. The files stay editable in the source tree.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

// Looks a file up by its path relative to the project root, e.g. "scenarios/clusters/lassen.yaml".
std::optional<std::string_view> embedded_file(std::string_view relative_path);
std::vector<std::string> embedded_file_names();

}  // namespace tessera

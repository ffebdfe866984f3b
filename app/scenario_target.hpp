#pragma once
// The target of the commands that measure kernels (profile, layer-check, model-check): a scenario
// file, "default", or a zoo model name standing for one GPU of that model; the sweep point and the
// local device they name.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/kernels/device.hpp"

namespace tessera::app {

// A scenario file or "default", with `cluster_file` (when not empty) replacing its platform,
// checked as `tessera validate` checks it (a SimGrid XML platform included): every command that
// reads a scenario to show or run it reads it this way.
LoadedScenario load_checked_scenario(const std::string& file, const std::string& cluster_file = "");

// Whether `target` names a zoo model (no file of that name exists).
bool names_zoo_model(const std::string& target);

// A zoo model runs `mini_batch` samples (default: the model's own mini-batch, else 1); with a
// scenario file `mini_batch` is an InputError naming --mini-batch (its points give the batch).
// `platform` replaces the target's platform (a pipeline's stages are balanced on its device).
LoadedScenario load_target(const std::string& target, std::optional<std::int64_t> mini_batch,
                           const PlatformOverride& platform = {});

// Sweep point `index` (--point); InputError naming --point when there is none.
const SweepPoint& sweep_point_at(const LoadedScenario& loaded, std::size_t index);

// Checks the sweep point indices `--points` gives; InputError naming --points for one out of range.
void check_point_indices(const LoadedScenario& loaded, const std::vector<std::size_t>& indices);

// Checks `--trace-point` (-1: not given) against the sweep and `--points`: InputError naming
// --trace-point for a point out of range or one the selection leaves out (it would trace nothing).
void check_trace_point(const LoadedScenario& loaded, std::int64_t trace_point,
                       const std::vector<std::size_t>& selected);

// The local device `name` names (--device: cpu or cuda:N); InputError naming --device otherwise.
std::unique_ptr<kernels::Device> open_device_option(const std::string& name);

}  // namespace tessera::app

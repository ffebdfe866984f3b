#pragma once
// One training step of a whole model on one rank, kept with everything another framework needs
// to take the same step: the batch (the model's synthetic task), every layer's weights before the
// step, the loss and every parameter's gradient. tessera model-check writes it;
// analysis/torch_crosscheck.py builds the model in PyTorch from the same description and compares
// (docs/guide/training-for-real.md, "Checking a whole model against PyTorch").
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/model/model_graph.hpp"
#include "tessera/kernels/communicator.hpp"
#include "tessera/kernels/device.hpp"

namespace tessera::kernels::real {

// A layer's parameters in its executor's layout (guide: the layouts), before the step, and their
// gradients of the step's loss. A tied layer (shared_with) holds only what it has beside the
// table (BERT's decoder bias); the table's gradient, its readers' summed, is its owner's.
struct CheckedParameters {
  std::string layer;
  std::vector<float> weights;
  std::vector<float> gradients;
};

// A ReLU's (or leaky ReLU's) output as the step's forward pass left it. Its derivative jumps at
// zero, so where an input lies within float32 rounding of zero either side is a correct float32
// answer, and the gradients below differ with the side taken; the reference takes the side
// these values show there (analysis/torch_model_step.py).
struct KinkOutput {
  std::string layer;
  std::vector<float> values;  // N x the layer's output per sample, as the layer laid it out
};

struct ModelStepCheck {
  std::vector<std::int64_t> input_shape;  // N x C x spatial
  std::vector<float> input;
  std::vector<std::int64_t> targets_shape;  // N x the values of one sample (target_layout)
  std::vector<float> targets;
  double loss = 0;
  std::vector<CheckedParameters> layers;  // every layer with parameters, in the model's order
  std::vector<KinkOutput> kinks;          // every ReLU and leaky ReLU, in the model's order
};

// On `rank` (one process: a communicator of size 1) and `device`, with plain SGD from the
// trainer's initial weights drawn from `seed`, on `mini_batch` samples of the synthetic task drawn
// from `seed` too. Throws std::invalid_argument naming the layer for a dropout layer that drops
// anything (its masks cannot be taken along) and for layers the real backend cannot run.
ModelStepCheck check_model_step(const ModelGraph& model, std::int64_t mini_batch, Device& device,
                                Communicator& rank, std::uint64_t seed);

}  // namespace tessera::kernels::real

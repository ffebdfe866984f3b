#pragma once
// Which gradients a layer's backward computes for its inputs: one for every input but the
// samples, which nobody reads. The step program (which backward ops exist) and the real backend
// (which gradient buffers a layer writes) both ask here.
#include <cstddef>

#include "tessera/core/model/model_graph.hpp"

namespace tessera {

// Whether a gradient flows back into `producer`'s output (false for the input samples).
bool gradient_flows_to(const ModelGraph& model, std::size_t producer);

// Whether layer `layer` computes a gradient for any of its inputs.
bool computes_input_gradient(const ModelGraph& model, std::size_t layer);

}  // namespace tessera

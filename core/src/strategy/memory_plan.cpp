#include "tessera/core/strategy/memory_plan.hpp"

#include <algorithm>
#include <optional>

#include "tessera/core/model/input_gradients.hpp"
#include "tessera/core/model/layer_cost.hpp"
#include "tessera/core/strategy/gradient_buckets.hpp"
#include "tessera/core/strategy/memory_peak.hpp"
#include "tessera/core/strategy/recompute_segments.hpp"

namespace tessera {
namespace {

double bytes_of(const TensorShape& shape, DType dtype) {
  return static_cast<double>(shape.elements()) * static_cast<double>(dtype_bytes(dtype));
}

double optimizer_states(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::sgd:
      return 0;
    case Optimizer::momentum:
      return 1;
    case Optimizer::adam:
      return 2;  // first and second moments
  }
  return 0;
}

// One tensor (a layer's output) as the stage holds it.
struct TensorLife {
  std::size_t first_forward = 0;  // its allocation: the first forward on the stage touching it
  std::size_t last_forward = 0;   // the last forward reading it
  std::optional<std::size_t> first_backward, last_backward;  // backward users (run high to low)
  double bytes = 0;  // with the halo planes a reader on the stage takes
  bool offload = false;
  bool kept() const { return first_backward.has_value(); }
};

class StagePlanner {
 public:
  StagePlanner(const ModelGraph& model, const ShardPlan& plan, int stage,
               const MemoryInputs& inputs, const OffloadDecision& decision)
      : model_(model),
        plan_(plan),
        inputs_(inputs),
        shards_(plan.micro_batch_layers),
        successor_(in_place_successors(model, plan)),
        predecessor_(model.layers().size()),
        segment_end_(inputs.recompute == RecomputePolicy::none
                         ? std::vector<std::optional<std::size_t>>(model.layers().size())
                         : recomputed_segment_ends(model, plan, stage)) {
    for (std::size_t t = 0; t < successor_.size(); ++t) {
      if (successor_[t]) predecessor_[*successor_[t]] = t;
    }
    // A segment's last layer writing in place over the layer before it (a residual sum's ReLU):
    // that layer's output is the checkpoint's buffer, so it is kept with it, not run again.
    for (std::size_t end = 0; end < segment_end_.size(); ++end) {
      const auto before = predecessor_[end];
      if (segment_end_[end] == end && before && segment_end_[*before] == end) {
        segment_end_[*before].reset();
      }
    }
    result_.recomputed_segment_end = segment_end_;
    result_.stage = stage;
    result_.decision = decision;
    result_.at_layer.resize(model.layers().size());
  }

  StageMemoryPlan plan() {
    add_static();
    const auto& layers = model_.layers();
    std::vector<std::optional<TensorLife>> lives(layers.size());
    for (std::size_t t = 0; t < layers.size(); ++t) lives[t] = life_of(t);
    if (inputs_.allocation == MemoryAllocation::network_wide) {
      place_network_wide(lives);
      return std::move(result_);
    }
    for (std::size_t t = 0; t < layers.size(); ++t) {
      if (lives[t]) place_activation(t, *lives[t]);
    }
    for (std::size_t i = 0; i < layers.size(); ++i) {
      if (on_stage(i)) place_own_state(i);
    }
    for (const auto& gradient : gradients()) {
      at(gradient.from, MemoryMoment::before_backward).push_back(gradient.allocate());
      at(gradient.to, MemoryMoment::after_backward).push_back(gradient.release());
    }
    place_prefetches(lives);
    return std::move(result_);
  }

 private:
  bool on_stage(std::size_t layer) const { return plan_.layers[layer].stage == result_.stage; }

  std::vector<MemoryEvent>& at(std::size_t layer, MemoryMoment moment) {
    return result_.at_layer[layer][static_cast<std::size_t>(moment)];
  }

  // Weights, their gradients and the optimizer state, whole or sharded over the GPUs that sum
  // the same gradients (ZeRO): a sharded GPU keeps 1/N of each, with sharded weights the
  // largest layer's gathered whole while it works, and with sharded gradients the buckets'
  // being summed (staged_gradient_bytes; whole over several micro-batches).
  void add_static() {
    double parameters = 0, largest_layer = 0;
    for (std::size_t i = 0; i < model_.layers().size(); ++i) {
      if (!on_stage(i)) continue;
      const auto held = static_cast<double>(plan_.layers[i].parameters);
      parameters += held;
      largest_layer = std::max(largest_layer, held);
    }
    const double bytes_per_parameter = static_cast<double>(dtype_bytes(inputs_.dtype));
    const double weights = parameters * bytes_per_parameter;
    const double largest = largest_layer * bytes_per_parameter;
    const double ways =
        static_cast<double>(plan_.config.data) * static_cast<double>(plan_.config.spatial_parts());
    const auto shard = inputs_.shard;
    auto stays = [&](MemoryUse use, double bytes) {
      if (bytes > 0) result_.at_start.push_back({.use = use, .bytes = bytes});
    };
    // A share and its working buffers may pass the whole (a layer larger than the rest together
    // gathered whole): ZeRO holds them all the same.
    auto share = [&](double bytes, ShardLevel from, double working) {
      return shard >= from && ways > 1 ? bytes / ways + working : bytes;
    };
    stays(MemoryUse::weights, share(weights, ShardLevel::weights, largest));
    stays(MemoryUse::weight_gradients,
          stages_gradients(shard, static_cast<std::int64_t>(ways), plan_.config.micro_batches)
              ? weights / ways + staged_gradient_bytes(model_, plan_, result_.stage,
                                                       inputs_.gradient_bucket_bytes, inputs_.dtype)
              : weights);
    stays(MemoryUse::optimizer_state,
          share(weights * optimizer_states(inputs_.optimizer), ShardLevel::optimizer, 0));
    stays(MemoryUse::workspace,
          result_.decision.memory_optimal_algorithms ? 0.0 : inputs_.workspace_bytes);
    if (on_stage(0)) {
      // The current sample's shard and, with prefetching, the next one's.
      stays(MemoryUse::input_buffers, bytes_of(plan_.layers.front().local_output, inputs_.dtype) *
                                          (inputs_.prefetch ? 2 : 1));
    }
  }

  // An output inside a recomputed segment (its last layer's output is the kept checkpoint).
  bool recomputed_inside(std::size_t tensor) const {
    return segment_end_[tensor] && *segment_end_[tensor] != tensor;
  }

  bool offloadable(std::size_t tensor) const {
    const auto policy = result_.decision.policy;
    if (policy == OffloadPolicy::none) return false;
    for (auto consumer : model_.consumers_of(tensor)) {
      if (!on_stage(consumer)) continue;
      const auto kind = model_.layers()[consumer].layer.kind;
      if (is_convolution(kind)) return true;
      if (policy == OffloadPolicy::all && kind == LayerKind::pooling) return true;
    }
    return false;
  }

  std::optional<TensorLife> life_of(std::size_t t) const {
    // An output an in-place ReLU writes over has no buffer of its own: the ReLU's is allocated
    // at its producer's forward.
    if (successor_[t]) return std::nullopt;
    const auto& layers = model_.layers();
    std::vector<std::size_t> readers;
    for (auto consumer : model_.consumers_of(t)) {
      if (on_stage(consumer)) readers.push_back(consumer);
    }
    if (!on_stage(t) && readers.empty()) return std::nullopt;
    TensorLife life;
    life.first_forward = on_stage(t) ? (predecessor_[t] ? *predecessor_[t] : t) : readers.front();
    life.last_forward = readers.empty() ? t : readers.back();
    life.bytes = bytes_of(shards_[t].local_output, inputs_.dtype);
    auto uses_in_backward = [&](std::size_t user) {
      life.first_backward = std::max(life.first_backward.value_or(user), user);
      life.last_backward = std::min(life.last_backward.value_or(user), user);
    };
    if (on_stage(t) && backward_needs(layers[t].layer).output) uses_in_backward(t);
    for (auto reader : readers) {
      const auto& shard = shards_[reader];
      if (layers[reader].input_indices.front() == t && !shard.input_halo.empty()) {
        life.bytes = std::max(life.bytes, bytes_of(shard.local_input_with_halo, inputs_.dtype));
      }
      if (backward_needs(layers[reader].layer).input) uses_in_backward(reader);
    }
    life.offload = life.kept() && offloadable(t);
    return life;
  }

  void place_activation(std::size_t t, const TensorLife& life) {
    const MemoryEvent allocate{.kind = MemoryEventKind::allocate, .tensor = t, .bytes = life.bytes};
    MemoryEvent release = allocate;
    release.kind = MemoryEventKind::release;
    at(life.first_forward, MemoryMoment::before_forward).push_back(allocate);
    if (!life.kept()) {
      at(life.last_forward, MemoryMoment::after_forward).push_back(release);
      if (recomputed_inside(t)) {
        // Backward reads only the layer's state, not its output: the output is written again
        // while the segment's forward runs again, and dropped once it has.
        at(*segment_end_[t], MemoryMoment::before_backward).push_back(allocate);
        at(*segment_end_[t], MemoryMoment::after_recompute).push_back(release);
      }
      return;
    }
    if (recomputed_inside(t)) {
      // Dropped after forward, made again when the segment's forward runs before its backward.
      at(life.last_forward, MemoryMoment::after_forward).push_back(release);
      at(*segment_end_[t], MemoryMoment::before_backward).push_back(allocate);
      at(*life.last_backward, MemoryMoment::after_backward).push_back(release);
      return;
    }
    if (life.offload) {
      auto copy = allocate;
      copy.kind = MemoryEventKind::offload_start;
      at(life.last_forward, MemoryMoment::before_forward).push_back(copy);
      copy.kind = MemoryEventKind::offload_wait;
      auto& end = at(life.last_forward, MemoryMoment::after_forward);
      end.push_back(copy);
      end.push_back(release);
      result_.offloaded.push_back(t);
      result_.offloaded_bytes += life.bytes;
      offloaded_lives_.push_back({t, life});
    }
    at(*life.last_backward, MemoryMoment::after_backward).push_back(release);
  }

  // What a layer keeps of its own for backward (pooling indices, dropout masks, batch-norm
  // statistics), from its forward to the end of its backward.
  void place_own_state(std::size_t i) {
    const auto& shard = shards_[i];
    const auto cost = layer_cost(shard.tensor.local_layer, shard.local_inputs, shard.local_output,
                                 shard.local_batch, inputs_.dtype);
    const auto bytes = static_cast<double>(cost.saved_for_backward_bytes);
    if (bytes <= 0) return;
    const MemoryEvent allocate{.kind = MemoryEventKind::allocate,
                               .use = MemoryUse::layer_state,
                               .tensor = i,
                               .bytes = bytes};
    MemoryEvent release = allocate;
    release.kind = MemoryEventKind::release;
    at(i, MemoryMoment::before_forward).push_back(allocate);
    if (recomputed_inside(i)) {
      // The segment's forward runs again and keeps it anew.
      at(i, MemoryMoment::after_forward).push_back(release);
      at(*segment_end_[i], MemoryMoment::before_backward).push_back(allocate);
    }
    at(i, MemoryMoment::after_backward).push_back(release);
  }

  struct GradientLife {
    std::size_t tensor = 0, from = 0, to = 0;
    double bytes = 0;
    MemoryEvent allocate() const {
      return {.kind = MemoryEventKind::allocate,
              .use = MemoryUse::activation_gradients,
              .tensor = tensor,
              .bytes = bytes};
    }
    MemoryEvent release() const {
      auto event = allocate();
      event.kind = MemoryEventKind::release;
      return event;
    }
  };

  // A tensor's gradient lives from the backward of its first consumer on the stage to run (the
  // highest) to the end of its producer's backward, or, where the producer is on another stage,
  // to the end of its last consumer's here (then it is sent). The samples get none.
  std::vector<GradientLife> gradients() const {
    const auto& layers = model_.layers();
    std::vector<GradientLife> lives;
    for (std::size_t t = 0; t < layers.size(); ++t) {
      // An in-place ReLU's input gradient is its output gradient, written over.
      if (!gradient_flows_to(model_, t) || successor_[t]) continue;
      std::vector<std::size_t> readers;
      for (auto consumer : model_.consumers_of(t)) {
        if (on_stage(consumer)) readers.push_back(consumer);
      }
      if (!on_stage(t) && readers.empty()) continue;
      const std::size_t end = predecessor_[t] ? *predecessor_[t] : t;
      lives.push_back({.tensor = t,
                       .from = readers.empty() ? t : readers.back(),
                       .to = on_stage(t) ? end : readers.front(),
                       .bytes = bytes_of(shards_[t].local_output, inputs_.dtype)});
    }
    return lives;
  }

  // Every output, gradient and layer state held from the step's start to its end (released after
  // the stage's last backward, so that the next step allocates them again).
  void place_network_wide(const std::vector<std::optional<TensorLife>>& lives) {
    std::vector<MemoryEvent> held;
    for (std::size_t t = 0; t < lives.size(); ++t) {
      if (lives[t]) {
        held.push_back({.kind = MemoryEventKind::allocate, .tensor = t, .bytes = lives[t]->bytes});
      }
    }
    for (const auto& gradient : gradients()) held.push_back(gradient.allocate());
    std::size_t last = SIZE_MAX;
    for (std::size_t i = 0; i < lives.size(); ++i) {
      if (!on_stage(i)) continue;
      last = std::min(last, i);
      const auto& shard = shards_[i];
      const auto cost = layer_cost(shard.tensor.local_layer, shard.local_inputs, shard.local_output,
                                   shard.local_batch, inputs_.dtype);
      if (cost.saved_for_backward_bytes > 0) {
        held.push_back({.kind = MemoryEventKind::allocate,
                        .use = MemoryUse::layer_state,
                        .tensor = i,
                        .bytes = static_cast<double>(cost.saved_for_backward_bytes)});
      }
    }
    if (last == SIZE_MAX) return;
    // Every micro-batch of a pipeline holds its own.
    for (std::int64_t k = 0; k < plan_.config.micro_batches; ++k) {
      for (auto event : held) {
        event.micro_batch = k;
        result_.at_start.push_back(event);
        event.kind = MemoryEventKind::release;
        result_.at_end.push_back(event);
      }
    }
  }

  // Backward, layer by layer from the last: fetch what the layer needs and is not back (a stall),
  // then start bringing back the nearest feature map still to come, no further than the next
  // convolution; both streams meet at the layer's end.
  void place_prefetches(const std::vector<std::optional<TensorLife>>& lives) {
    if (offloaded_lives_.empty()) return;
    const auto& layers = model_.layers();
    std::vector<bool> resident(layers.size(), true);
    for (const auto& [t, life] : offloaded_lives_) resident[t] = false;
    auto bring_back = [&](std::size_t layer, std::size_t t, bool wait) {
      auto& before = at(layer, MemoryMoment::before_backward);
      const double bytes = lives[t]->bytes;
      before.push_back({.kind = MemoryEventKind::allocate, .tensor = t, .bytes = bytes});
      before.push_back({.kind = MemoryEventKind::prefetch_start, .tensor = t, .bytes = bytes});
      auto& waits_at = wait ? before : at(layer, MemoryMoment::after_backward);
      const MemoryEvent done{.kind = MemoryEventKind::prefetch_wait, .tensor = t, .bytes = bytes};
      // At the layer's end the wait comes before anything is released.
      waits_at.insert(wait ? waits_at.end() : waits_at.begin(), done);
      resident[t] = true;
    };
    for (std::size_t i = layers.size(); i-- > 0;) {
      if (!on_stage(i)) continue;
      for (const auto& [t, life] : offloaded_lives_) {
        const auto& reads = layers[i].input_indices;
        const auto needs = backward_needs(layers[i].layer);
        const bool needed =
            (t == i && needs.output) ||
            (needs.input && std::find(reads.begin(), reads.end(), t) != reads.end());
        if (needed && !resident[t]) bring_back(i, t, true);
      }
      std::size_t bound = 0;  // the next convolution to run backward
      for (std::size_t j = i; j-- > 0;) {
        if (on_stage(j) && is_convolution(layers[j].layer.kind)) {
          bound = j;
          break;
        }
      }
      std::optional<std::size_t> nearest;
      for (const auto& [t, life] : offloaded_lives_) {
        const auto first = *life.first_backward;
        if (resident[t] || first >= i || first < bound) continue;
        if (!nearest || first > *lives[*nearest]->first_backward) nearest = t;
      }
      if (nearest) bring_back(i, *nearest, false);
    }
  }

  const ModelGraph& model_;
  const ShardPlan& plan_;
  const MemoryInputs& inputs_;
  // One micro-batch's tensors: each micro-batch of a pipeline holds its own.
  const std::vector<LayerShard>& shards_;
  const std::vector<std::optional<std::size_t>> successor_;  // in_place_successors
  std::vector<std::optional<std::size_t>> predecessor_;      // the layer whose buffer it took
  // Per layer, the last layer of its recomputed segment (recompute_segments.hpp), if any.
  std::vector<std::optional<std::size_t>> segment_end_;
  StageMemoryPlan result_;
  std::vector<std::pair<std::size_t, TensorLife>> offloaded_lives_;
};

bool every_stage_fits(const ModelGraph& model, const ShardPlan& plan, const MemoryInputs& inputs,
                      const OffloadDecision& decision) {
  for (int stage = 0; stage < plan.stages; ++stage) {
    const auto memory = plan_stage_memory(model, plan, stage, inputs, decision);
    if (peak_of(model, plan, memory).total_bytes > inputs.capacity_bytes) return false;
  }
  return true;
}

}  // namespace

std::string to_string(MemoryUse use) {
  static const char* const names[] = {
      "weights",       "weight_gradients", "optimizer_state",      "workspace",
      "input_buffers", "activations",      "activation_gradients", "layer_state"};
  return names[static_cast<int>(use)];
}

bool holds_feature_maps(MemoryUse use) {
  return use == MemoryUse::activations || use == MemoryUse::activation_gradients ||
         use == MemoryUse::layer_state;
}

StageMemoryPlan plan_stage_memory(const ModelGraph& model, const ShardPlan& plan, int stage,
                                  const MemoryInputs& inputs, const OffloadDecision& decision) {
  return StagePlanner(model, plan, stage, inputs, decision).plan();
}

std::vector<OffloadDecision> offload_candidates(OffloadPolicy policy) {
  if (policy != OffloadPolicy::dyn) return {{policy, false}};
  return {{OffloadPolicy::none, false},
          {OffloadPolicy::conv, false},
          {OffloadPolicy::all, false},
          {OffloadPolicy::all, true}};
}

OffloadDecision decide_offload(const ModelGraph& model, const ShardPlan& plan,
                               const MemoryInputs& inputs) {
  const auto candidates = offload_candidates(inputs.offload);
  for (const auto& decision : candidates) {
    if (every_stage_fits(model, plan, inputs, decision)) return decision;
  }
  return candidates.back();
}

std::vector<std::optional<std::size_t>> in_place_successors(const ModelGraph& model,
                                                            const ShardPlan& plan) {
  const auto& layers = model.layers();
  std::vector<std::optional<std::size_t>> successor(layers.size());
  for (std::size_t r = 0; r < layers.size(); ++r) {
    if (layers[r].layer.kind != LayerKind::relu) continue;
    const std::size_t t = layers[r].input_indices.front();
    const auto consumers = model.consumers_of(t);
    const bool redistributed = plan.layers[t].spatially_split && !plan.layers[r].spatially_split;
    if (consumers.size() == 1 && layers[t].layer.kind != LayerKind::input &&
        !backward_needs(layers[t].layer).output && !redistributed &&
        plan.layers[t].stage == plan.layers[r].stage) {
      successor[t] = r;
    }
  }
  return successor;
}

double kept_activation_bytes(const ModelGraph& model, const ShardPlan& plan, std::size_t layer,
                             DType dtype) {
  const auto& layers = model.layers();
  bool kept = backward_needs(layers[layer].layer).output;
  double bytes = bytes_of(plan.layers[layer].local_output, dtype);
  for (auto consumer : model.consumers_of(layer)) {
    if (!backward_needs(layers[consumer].layer).input) continue;
    kept = true;
    const auto& shard = plan.layers[consumer];
    if (layers[consumer].input_indices.front() == layer && !shard.input_halo.empty()) {
      bytes = std::max(bytes, bytes_of(shard.local_input_with_halo, dtype));
    }
  }
  return kept ? bytes : 0.0;
}

}  // namespace tessera

#include "tessera/core/plan_search/plan_screen.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <tuple>
#include <type_traits>

#include "tessera/core/common/content_digest.hpp"
#include "tessera/core/common/parallel_indices.hpp"
#include "tessera/core/plan_search/communication_bound.hpp"
#include "tessera/core/point/point_input.hpp"
#include "tessera/core/point/program_recipe.hpp"
#include "tessera/core/strategy/input_source.hpp"
#include "tessera/core/strategy/memory_estimate.hpp"
#include "tessera/core/strategy/stage_balance.hpp"

namespace tessera {

Scenario candidate_scenario_section(const Scenario& base, const PlanStrategy& strategy) {
  Scenario s = base;
  s.parallelism.data = strategy.data;
  s.parallelism.spatial_grid = strategy.spatial_grid;
  s.parallelism.spatial_until = strategy.spatial_until;
  s.parallelism.model_degree = strategy.model_degree;
  s.parallelism.stage_starts = strategy.stage_starts;
  s.parallelism.placement = strategy.placement;
  s.parallelism.micro_batches = strategy.micro_batches;
  s.parallelism.schedule = strategy.schedule;
  s.parallelism.tensor = strategy.tensor;
  s.parallelism.gpus.reset();
  s.memory.shard = strategy.shard;
  s.model.mini_batch = strategy.mini_batch;
  s.memory.offload = strategy.offload;
  s.micro_batching.workspace_limit_bytes = strategy.workspace_limit_bytes;
  s.sweep.reset();
  // The traced GPUs must exist at this GPU count.
  s.outputs.trace_gpus = {0};
  return s;
}

namespace {

// The candidate's placement of its stages, as the scenario loader makes it for best.yaml.
StagePlacement placement_of(const LoadedScenario& base, const PlanStrategy& strategy,
                            const ParallelConfig& config) {
  return balanced_by_time(strategy.stage_placement(), base.model, base.cluster.gpu, config,
                          base.scenario.model.dtype);
}

}  // namespace

LoadedScenario candidate_scenario(const LoadedScenario& base, const PlanStrategy& strategy) {
  LoadedScenario loaded = base;
  loaded.scenario = candidate_scenario_section(base.scenario, strategy);
  const auto config = strategy.config();
  loaded.points = {{0, config,
                    plan_shards(loaded.model, config, strategy.spatial_until,
                                placement_of(base, strategy, config))}};
  return loaded;
}

void apply_memory_limit(LoadedScenario& scenario, double limit_bytes) {
  scenario.scenario.memory.device_capacity_bytes = limit_bytes;
  scenario.device_capacity_bytes = limit_bytes;
}

namespace {

bool is_compute(const StepOp& op) {
  return op.kind == StepOpKind::compute || op.kind == StepOpKind::update;
}

}  // namespace

double step_lower_bound(const std::vector<StepProgram>& programs,
                        const StageTransferSeconds& transfer_seconds) {
  // Every program's compute ops in order, a receive waiting for its message's send (messages
  // between stages match by stages, tensor, direction and micro-batch, as the simulator matches
  // them), and then for its transfer, which starts once both ends are there; sends do not
  // block.
  using Message = std::tuple<int, int, std::size_t, int, std::int64_t>;
  const auto message_of = [](int from, int to, const StepOp& op) {
    return Message{from, to, op.layer, static_cast<int>(op.direction), op.micro_batch};
  };
  const std::size_t n = programs.size();
  std::set<int> stages;
  for (const auto& program : programs) stages.insert(program.stage);
  std::vector<double> clock(n, 0.0);
  std::vector<std::size_t> position(n, 0);
  // Send times and least transfer times of each message not yet received.
  std::map<Message, std::deque<std::pair<double, double>>> sent;
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t k = 0; k < n; ++k) {
      const auto& program = programs[k];
      for (; position[k] < program.ops.size(); ++position[k]) {
        const auto& op = program.ops[position[k]];
        if (is_compute(op)) {
          clock[k] += op.seconds;
        } else if (op.kind == StepOpKind::stage_send) {
          const double transfer =
              transfer_seconds ? transfer_seconds(program.stage, op.peer_stage, op.bytes) : 0.0;
          sent[message_of(program.stage, op.peer_stage, op)].emplace_back(clock[k], transfer);
        } else if (op.kind == StepOpKind::stage_recv && stages.count(op.peer_stage)) {
          auto& times = sent[message_of(op.peer_stage, program.stage, op)];
          if (times.empty()) break;  // wait for the sender to get there
          const auto [send, transfer] = times.front();
          clock[k] = std::max(clock[k], send) + transfer;
          times.pop_front();
        }
        progress = true;
      }
    }
  }
  double bound = 0;
  for (std::size_t k = 0; k < n; ++k) {
    // A program left waiting (a receive nothing sends) still computes everything it holds.
    double total = 0;
    for (const auto& op : programs[k].ops) total += is_compute(op) ? op.seconds : 0;
    bound = std::max({bound, clock[k], total});
  }
  return bound;
}

// The signature lists every field of these structures: one added to them (pipelining's, say)
// must be added to it too, or candidates that differ in it would share a simulation. These
// sizes (x86-64, GCC 12) stop the build until it is. Left out on purpose: a program's
// workspace_limit_bytes, which the simulator does not read (the op times it plays already hold
// its effect), so candidates that differ only there share one simulation; and an op's flops and
// memory_bytes, which only the Chakra export reads.
static_assert(sizeof(StepOp) == 232 && sizeof(StepProgram) == 144 && sizeof(ParallelConfig) == 72,
              "a field was added to StepOp, StepProgram or ParallelConfig: add it to "
              "simulation_signature, then update these sizes");

namespace {

// Appends fields to one byte string without temporaries: screening a hundred thousand
// candidates spends much of its time here. Numbers go in as their bytes (exact, fixed size),
// text with its length first, so that no two field sequences give the same bytes.
class SignatureBytes {
 public:
  SignatureBytes() { bytes_.reserve(1 << 16); }
  SignatureBytes& operator<<(std::string_view text) {
    *this << text.size();
    bytes_.append(text);
    return *this;
  }
  SignatureBytes& operator<<(const char* text) { return *this << std::string_view(text); }
  SignatureBytes& operator<<(const std::string& text) { return *this << std::string_view(text); }
  template <typename Number>
  requires std::is_arithmetic_v<Number> || std::is_enum_v<Number> SignatureBytes& operator<<(
      Number value) {
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof value);
    return *this;
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

}  // namespace

std::string simulation_signature(const ParallelConfig& config,
                                 const std::vector<StepProgram>& programs) {
  SignatureBytes signature;
  signature << config.data << config.mini_batch << config.model_degree << config.micro_batches
            << config.schedule << config.tensor;
  // The split axes in order, not which axes they are: their parts and order decide the ranks'
  // neighbours (rank_layout.hpp numbers spatial indices row-major over the grid).
  std::vector<int> axis_order(config.spatial_grid.size(), -1);
  int split_axes = 0;
  for (std::size_t axis = 0; axis < config.spatial_grid.size(); ++axis) {
    if (config.spatial_grid[axis] == 1) continue;
    axis_order[axis] = split_axes++;
    signature << config.spatial_grid[axis];
  }
  signature << "programs" << programs.size();
  for (const auto& program : programs) {
    signature << program.stage << program.parameters << program.allreduce_group_size
              << program.stages_gradients << program.buckets.size();
    for (const auto& bucket : program.buckets) signature << bucket.bytes;
    signature << program.table_stages.size();
    for (const auto& [layer, stages] : program.table_stages) {
      signature << layer << stages.size();
      for (int stage : stages) signature << stage;
    }
    signature << program.ops.size();
    for (const auto& op : program.ops) {
      const auto order = static_cast<std::size_t>(op.axis);
      const int axis = op.axis < 0                  ? -1
                       : order >= axis_order.size() ? 99
                       : axis_order[order] >= 0     ? axis_order[order]
                                                    : 99;
      signature << op.kind << op.category << op.layer << op.direction << op.part << op.recomputed
                << op.seconds << op.window_seconds << op.provenance << op.bytes << axis
                << op.bytes_to_lower << op.bytes_to_upper << op.exchange << op.peer_stage
                << op.input << op.bucket << op.group << op.source << op.samples << op.memory
                << op.micro_batch << describe(op.micro_batches) << op.window_plans.size();
      for (const auto& window : op.window_plans) {
        signature << window.kernel.shape << describe(window.plan);
      }
    }
  }
  return content_digest(signature.bytes());
}

ScreenedCandidate screen_candidate(const LoadedScenario& base, const PlanCandidate& candidate,
                                   const ProfileDatabase* profiles) {
  ScreenedCandidate screened;
  screened.candidate = candidate;
  const auto& strategy = candidate.strategy;
  const auto config = strategy.config();
  screened.capacity_bytes = base.device_capacity_bytes;
  if (config.gpus() > base.cluster.total_gpus()) {
    screened.invalid_reason = std::to_string(config.gpus()) + " GPUs exceed platform " +
                              base.cluster.name + " (" + std::to_string(base.cluster.total_gpus()) +
                              " GPUs)";
    return screened;
  }
  ShardPlan plan;
  try {
    plan = plan_shards(base.model, config, strategy.spatial_until,
                       placement_of(base, strategy, config));
  } catch (const StrategyError& error) {
    screened.invalid_reason = error.key() + ": " + error.what();
    return screened;
  }
  screened.valid = true;
  const Scenario s = candidate_scenario_section(base.scenario, strategy);
  const auto inputs = memory_inputs_of(s, base.device_capacity_bytes);
  const auto memory = estimate_memory(base.model, plan, inputs);
  screened.peak_memory_bytes = memory.total_bytes;
  screened.fits = memory.fits;
  if (!screened.fits) return screened;

  // The program the simulator would play, under the policy the memory plan applies; only its
  // compute ops count, so the epoch's input source does not matter beyond the ops it adds.
  const ProgramRecipe recipe{.scenario = &s,
                             .offload = memory.offload,
                             .input_source = plan_input(base, config.gpus()).of(Epoch::later),
                             .overlaps_communication = base.cluster.gpu.overlaps_communication};
  const auto programs = recipe.build(base.model, plan, roofline_of(base.cluster.gpu), profiles);
  // The programs hold the first node group's GPU at the average batch. Every candidate has GPUs
  // of that group, so its step is at least their compute, unless shares follow GPU speed: then a
  // slower first group holds fewer samples, and no bound is claimed.
  const bool shares_by_speed = s.parallelism.data_split == DataSplit::proportional;
  // The communication bounds know the links of the cluster's own nodes (not of a SimGrid
  // platform file) and, walking a few GPUs, assume each is the first node group's.
  const bool links_known = base.simgrid_xml_path.empty() && base.cluster.uniform();
  const CommunicationBoundSettings settings{
      .bandwidth_factor = fastest_bandwidth_factor(s.sim.network_model),
      .allreduce_may_be_measured = profiles != nullptr};
  if (!shares_by_speed || base.cluster.uniform()) {
    StageTransferSeconds transfer;
    if (links_known) {
      transfer = [&](int from_stage, int to_stage, double bytes) {
        return stage_transfer_seconds(config, base.cluster, settings, from_stage, to_stage, bytes);
      };
    }
    screened.step_lower_bound_seconds = step_lower_bound(programs, transfer);
  }
  if (links_known) {
    screened.step_lower_bound_seconds =
        std::max(screened.step_lower_bound_seconds,
                 communication_step_bound(programs, config, base.cluster, settings));
  }
  screened.applied_offload = memory.offload;
  screened.simulation_signature = simulation_signature(config, programs);
  return screened;
}

std::vector<ScreenedCandidate> screen_candidates(const LoadedScenario& base,
                                                 const std::vector<PlanCandidate>& candidates,
                                                 const ProfileDatabase* profiles,
                                                 std::size_t threads) {
  std::vector<ScreenedCandidate> screened(candidates.size());
  for_each_index_in_threads(candidates.size(), threads, [&](std::size_t i) {
    screened[i] = screen_candidate(base, candidates[i], profiles);
  });
  return screened;
}

}  // namespace tessera

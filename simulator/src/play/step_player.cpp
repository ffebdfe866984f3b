#include "step_player.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <stdexcept>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include "tessera/core/common/quantity.hpp"
#include "tessera/core/strategy/halo_copies.hpp"

namespace tessera::sim {
namespace {

constexpr int kHaloChannel = 0;
constexpr int kGradientChannel = 1;
constexpr int kGroupChannel = 2;
constexpr int kStageChannel = 3;

double now() {
  return simgrid::s4u::Engine::get_clock();
}

// Messages between stages match by tensor, direction and micro-batch, so that stages may post them
// in different orders (placements where branches cross stages).
int stage_channel(const StepOp& op) {
  constexpr int kMicroBatches = 1 << 16;
  const int direction = op.direction == Direction::forward ? 0 : 1;
  return kStageChannel + 1 + (static_cast<int>(op.layer) * 2 + direction) * kMicroBatches +
         static_cast<int>(op.micro_batch % kMicroBatches);
}

int count_ops(const StepProgram& program, StepOpKind kind) {
  int count = 0;
  for (const auto& op : program.ops) count += op.kind == kind ? 1 : 0;
  return count;
}

}  // namespace

// Queues between one GPU's compute actor and its helpers (zero simulated cost).
struct StepPlayer::Streams {
  struct Bucket {
    double bytes = 0;
    bool reduce_scatter = false;  // a sharded optimizer's (memory.shard), else all-reduced
  };
  std::deque<Bucket> gradient_buckets;
  simgrid::s4u::SemaphorePtr gradient_requests = simgrid::s4u::Semaphore::create(0);
  simgrid::s4u::SemaphorePtr gradient_done = simgrid::s4u::Semaphore::create(0);
};

StepPlayer::StepPlayer(const SimPlatform& platform, const Fabric& fabric,
                       const RankNumbering& layout,
                       const std::vector<std::vector<StepProgram>>& program_sets,
                       PlaySettings settings)
    : platform_(platform),
      fabric_(fabric),
      layout_(layout),
      program_sets_(program_sets),
      settings_(std::move(settings)),
      times_(static_cast<std::size_t>(layout.gpus())) {
  const auto& programs = program_sets.at(0);
  const int shards = static_cast<int>(layout.tensor_group(0).size());
  for (std::size_t stage = 0; stage < programs.size(); ++stage) {
    for (int shard = 0; shard < shards; ++shard) {
      stage_groups_.push_back(
          std::make_unique<MemberGroup>(layout.stage_group(static_cast<int>(stage), shard)));
    }
  }
  const int nodes = (layout.gpus() + platform.gpus_per_node - 1) / platform.gpus_per_node;
  std::vector<int> readers(static_cast<std::size_t>(nodes), 0);
  int rounds = 0;
  for (int rank = 0; rank < layout.gpus(); ++rank) {
    const int reads = count_ops(program_of(rank), StepOpKind::read_start);
    if (reads > 0) ++readers[static_cast<std::size_t>(platform.node_of(rank))];
    rounds = std::max(rounds, reads);
  }
  InputSource source = InputSource::none;
  for (const auto& program : programs) {
    for (const auto& op : program.ops) {
      if (op.kind == StepOpKind::read_start) source = op.source;
    }
  }
  // The input-reads track of the trace: from a GPU's request to its shard's arrival.
  auto delivered = [this](int rank, double asked, double arrived) {
    if (settings_.traced_gpus.count(rank) && arrived > asked) {
      events_.push_back(
          {rank, TimelineTrack::input_reads, "input read", OpCategory::io, asked, arrived});
    }
  };
  inputs_ = std::make_unique<InputPipeline>(platform, layout, std::move(readers), rounds, source,
                                            settings_.store_draw,
                                            settings_.copied_bytes_per_read_byte, delivered);
}

StepPlayer::~StepPlayer() = default;

const MemberGroup& StepPlayer::stage_group_of(int rank) const {
  const auto shards = static_cast<std::size_t>(layout_.tensor_group(rank).size());
  return *stage_groups_.at(static_cast<std::size_t>(layout_.stage_of(rank)) * shards +
                           static_cast<std::size_t>(layout_.tensor_index_of(rank)));
}

const StepProgram& StepPlayer::program_of(int rank) const {
  const auto& sets = settings_.program_set_of_rank;
  const auto set = sets.empty() ? 0 : sets.at(static_cast<std::size_t>(rank));
  return program_sets_.at(static_cast<std::size_t>(set))
      .at(static_cast<std::size_t>(layout_.stage_of(rank)));
}

double StepPlayer::compute_stretch_of(int rank) const {
  const auto& stretch = settings_.compute_stretch_of_rank;
  return stretch.empty() ? 1.0 : stretch.at(static_cast<std::size_t>(rank));
}

void StepPlayer::spawn() {
  for (int rank = 0; rank < layout_.gpus(); ++rank) {
    streams_.push_back(std::make_unique<Streams>());
    const auto& program = program_of(rank);
    auto* host = fabric_.host(rank);
    simgrid::s4u::Actor::create("gpu" + std::to_string(rank), host,
                                [this, rank] { play_gpu(rank); });
    if (const int buckets = count_ops(program, StepOpKind::gradient_allreduce) +
                            count_ops(program, StepOpKind::gradient_reduce_scatter);
        buckets > 0) {
      simgrid::s4u::Actor::create("comm" + std::to_string(rank), host, [this, rank, buckets] {
        play_communication_stream(rank, buckets);
      });
    }
  }
  inputs_->spawn();
}

void StepPlayer::record(int rank, int track, const std::string& name, OpCategory category,
                        double start) {
  const double end = now();
  auto& times = times_[static_cast<std::size_t>(rank)];
  if (track == 0) times.seconds[static_cast<int>(category)] += end - start;
  if (settings_.traced_gpus.count(rank) && end > start) {
    events_.push_back({rank, static_cast<TimelineTrack>(track), name, category, start, end});
  }
}

AllreduceAlgorithm StepPlayer::algorithm_for(const CollectiveContext& context,
                                             const MemberGroup& members, double bytes) {
  if (!settings_.automatic_allreduce) return settings_.allreduce;
  const auto key = std::make_tuple(members.id(), bytes, context.channel);
  if (auto it = chosen_.find(key); it != chosen_.end()) return it->second;
  const AllreduceAlgorithm chosen = choose_allreduce(context, members, bytes);
  if (members.size() > 1 && !plays_measured_allreduce(context, members, bytes)) {
    const int gpus = static_cast<int>(members.size()) * std::max(context.replicas, 1);
    choices_.emplace(bytes, gpus, chosen);
  }
  return chosen_[key] = chosen;
}

std::string StepPlayer::automatic_allreduce_choices() const {
  constexpr std::size_t kListed = 6;  // the rest are counted: a note stays one line
  std::string text;
  std::size_t listed = 0;
  for (const auto& [bytes, gpus, algorithm] : choices_) {
    if (listed++ == kListed) break;
    text += std::string(text.empty() ? "" : ", ") + format_bytes(bytes) + " over " +
            std::to_string(gpus) + " GPUs: " + to_string(algorithm);
  }
  if (choices_.size() > kListed) {
    text += " and " + std::to_string(choices_.size() - kListed) + " more";
  }
  return text;
}

std::vector<MemorySample> StepPlayer::memory_samples() const {
  std::vector<MemorySample> samples;
  for (int gpu : settings_.traced_gpus) {
    if (gpu >= static_cast<int>(times_.size())) continue;
    const auto mine = times_[static_cast<std::size_t>(gpu)].memory.samples(gpu);
    samples.insert(samples.end(), mine.begin(), mine.end());
  }
  return samples;
}

void StepPlayer::play_gpu(int rank) {
  const auto& program = program_of(rank);
  const double stretch = compute_stretch_of(rank);
  auto& streams = *streams_[static_cast<std::size_t>(rank)];
  std::map<int, std::vector<simgrid::s4u::CommPtr>> halos;
  simgrid::s4u::CommPtr input_read;
  // Sends to the next or previous stage, waited for at the step's end; finished ones are let go
  // as new ones start (Fabric::finished: each un-waited comm slows every later one down).
  std::deque<simgrid::s4u::CommPtr> stage_sends;
  // vDNN's memory stream: copies over the GPU's PCIe link to and from its node's host memory
  // (the link the input pipeline's copies take too), waited for at the layer's end.
  std::vector<std::pair<simgrid::s4u::CommPtr, std::string>> copies;
  auto* host_memory = host_copies_played()
                          ? platform_.node_hosts[static_cast<std::size_t>(platform_.node_of(rank))]
                          : nullptr;
  int queued_buckets = 0;
  int summed_buckets = 0;  // of those, the ones waited for
  const CollectiveContext group_context{fabric_,
                                        platform_.gpus_per_node,
                                        kGroupChannel,
                                        settings_.granularity,
                                        1,
                                        &platform_.node_rings,
                                        settings_.measured_allreduce};
  // Every GPU of the stage holding this shard: the group the gradients are summed over (batch
  // norm over the replicas, sharded weights), and the one the symmetric reduction samples.
  const CollectiveContext stage_context{fabric_,
                                        platform_.gpus_per_node,
                                        kGroupChannel,
                                        settings_.granularity,
                                        settings_.replicas,
                                        &platform_.node_rings,
                                        settings_.measured_allreduce};
  // The members a group collective spans, this rank's index among them, and their context.
  struct GroupAt {
    const MemberGroup* members;
    std::size_t index;
    const CollectiveContext* context;
  };
  auto group_at = [&](const StepOp& op) -> GroupAt {
    switch (op.group) {
      case CollectiveGroup::stage: {
        const auto& members = stage_group_of(rank);
        return {&members, members.index_of(rank), &stage_context};
      }
      case CollectiveGroup::tensor:
        return {&member_group(layout_.tensor_group(rank)),
                static_cast<std::size_t>(layout_.tensor_index_of(rank)), &group_context};
      case CollectiveGroup::table: {
        const auto& stages = program.table_stages.at(op.layer);
        const auto& members = member_group(layout_.table_group(rank, stages));
        return {&members, members.index_of(rank), &group_context};
      }
      case CollectiveGroup::spatial:
        break;
    }
    return {&member_group(layout_.spatial_group(rank)),
            static_cast<std::size_t>(layout_.spatial_index_of(rank)), &group_context};
  };
  // Consecutive kernels run back to back on the compute stream: one sleep covers them all, which
  // keeps the number of simulated activities (the simulator's cost) low.
  double queued_compute = 0;
  auto flush_compute = [&] {
    if (queued_compute <= 0) return;
    simgrid::s4u::this_actor::sleep_for(queued_compute);
    queued_compute = 0;
  };
  auto& times = times_[static_cast<std::size_t>(rank)];
  const bool traced = settings_.traced_gpus.count(rank) > 0;
  for (const auto& op : program.ops) {
    if (op.kind == StepOpKind::allocate || op.kind == StepOpKind::release) {
      // In program order: after the compute queued so far.
      times.memory.change(now() + queued_compute,
                          op.kind == StepOpKind::allocate ? op.bytes : -op.bytes, op.memory);
      continue;
    }
    if (op.kind == StepOpKind::compute || op.kind == StepOpKind::update) {
      const double start = now() + queued_compute;
      const double seconds = op.seconds * stretch;
      queued_compute += seconds;
      times.seconds[static_cast<int>(OpCategory::compute)] += seconds;
      if (traced && seconds > 0) {
        events_.push_back({rank, TimelineTrack::compute, op.label, OpCategory::compute, start,
                           start + seconds, op.provenance});
      }
      continue;
    }
    flush_compute();
    const double start = now();
    switch (op.kind) {
      case StepOpKind::compute:
      case StepOpKind::update:
      case StepOpKind::allocate:
      case StepOpKind::release:
        break;
      case StepOpKind::offload_start:
      case StepOpKind::prefetch_start: {
        if (!host_memory) break;
        auto* gpu = fabric_.host(rank);
        const auto bytes = static_cast<std::uint64_t>(op.bytes);
        copies.emplace_back(op.kind == StepOpKind::offload_start
                                ? simgrid::s4u::Comm::sendto_async(gpu, host_memory, bytes)
                                : simgrid::s4u::Comm::sendto_async(host_memory, gpu, bytes),
                            op.label);
        break;
      }
      case StepOpKind::offload_wait:
      case StepOpKind::prefetch_wait:
        for (auto& [copy, label] : copies) {
          copy->wait();
          if (traced) {
            events_.push_back({rank, TimelineTrack::memory_copies, label, OpCategory::offload,
                               copy->get_start_time(), copy->get_finish_time()});
          }
        }
        copies.clear();
        break;
      case StepOpKind::halo_start: {
        // The faces are packed before any is sent.
        const bool lower = layout_.neighbour(rank, op.axis, -1) >= 0;
        const bool upper = layout_.neighbour(rank, op.axis, +1) >= 0;
        const double pack_seconds = halo_copy_seconds(op, lower, upper) * stretch;
        if (pack_seconds > 0) simgrid::s4u::this_actor::sleep_for(pack_seconds);
        // Every rank plays the same op, so a neighbour sends me what I send to my other side.
        auto& comms = halos[op.exchange];
        for (int step : {-1, +1}) {
          const int peer = layout_.neighbour(rank, op.axis, step);
          if (peer < 0) continue;
          const double outgoing = step < 0 ? op.bytes_to_lower : op.bytes_to_upper;
          const double incoming = step < 0 ? op.bytes_to_upper : op.bytes_to_lower;
          // Not detached: SimGrid 3.32 tracks detached comms in a list it scans linearly, which
          // slowed large simulations down (docs/measurements/2026-11-21.md).
          if (outgoing > 0) comms.push_back(fabric_.send_async(rank, peer, outgoing, kHaloChannel));
          if (incoming > 0) comms.push_back(fabric_.recv_async(rank, peer, kHaloChannel));
        }
        break;
      }
      case StepOpKind::halo_wait: {
        for (auto& comm : halos[op.exchange]) comm->wait();
        halos.erase(op.exchange);
        const bool lower = layout_.neighbour(rank, op.axis, -1) >= 0;
        const bool upper = layout_.neighbour(rank, op.axis, +1) >= 0;
        const double unpack_seconds = halo_copy_seconds(op, lower, upper) * stretch;
        if (unpack_seconds > 0) simgrid::s4u::this_actor::sleep_for(unpack_seconds);
        break;
      }
      case StepOpKind::group_allreduce: {
        const auto group = group_at(op);
        allreduce(*group.context, *group.members, group.index, op.bytes,
                  algorithm_for(*group.context, *group.members, op.bytes));
        break;
      }
      case StepOpKind::group_allgather: {
        const auto group = group_at(op);
        allgather(*group.context, *group.members, group.index, op.bytes);
        break;
      }
      case StepOpKind::group_alltoall: {
        const auto& group = member_group(layout_.spatial_group(rank));
        alltoall(group_context, group, static_cast<std::size_t>(layout_.spatial_index_of(rank)),
                 op.bytes);
        break;
      }
      case StepOpKind::stage_send:
        while (!stage_sends.empty() && Fabric::finished(stage_sends.front())) {
          stage_sends.pop_front();
        }
        stage_sends.push_back(fabric_.send_async(rank, layout_.peer_in_stage(rank, op.peer_stage),
                                                 op.bytes, stage_channel(op)));
        break;
      case StepOpKind::stage_recv: {
        // Waiting for the other stage to produce it is a pipeline bubble (idle); only the
        // transfer itself is communication.
        auto message =
            fabric_.recv_async(rank, layout_.peer_in_stage(rank, op.peer_stage), stage_channel(op));
        message->wait();
        const double moving_since = std::max(start, message->get_start_time());
        times.seconds[static_cast<int>(OpCategory::other_communication)] += now() - moving_since;
        if (traced && moving_since > start) {
          events_.push_back({.gpu = rank,
                             .name = op.label + " (waiting: pipeline bubble)",
                             .category = op.category,
                             .start_seconds = start,
                             .end_seconds = moving_since,
                             .idle = true});
        }
        if (traced && now() > moving_since) {
          events_.push_back(
              {rank, TimelineTrack::compute, op.label, op.category, moving_since, now()});
        }
        continue;
      }
      case StepOpKind::gradient_allreduce:
      case StepOpKind::gradient_reduce_scatter:
        streams.gradient_buckets.push_back(
            {op.bytes, op.kind == StepOpKind::gradient_reduce_scatter});
        streams.gradient_requests->release();
        ++queued_buckets;
        break;
      case StepOpKind::gradient_wait: {
        // The communication actor sums the buckets in the order they were queued.
        const int until = op.bucket >= 0 ? op.bucket + 1 : queued_buckets;
        for (; summed_buckets < until; ++summed_buckets) streams.gradient_done->acquire();
        break;
      }
      case StepOpKind::read_start:
        input_read = inputs_->request(rank, op.bytes, op.samples);
        break;
      case StepOpKind::read_wait:
        if (input_read) input_read->wait();
        input_read = nullptr;
        break;
    }
    record(rank, 0, op.label, op.category, start);
  }
  flush_compute();
  for (auto& send : stage_sends) send->wait();
  times.end_seconds = now();
  times.memory.finish(times.end_seconds);
  times.finished = true;
}

// SimGrid ends a run whose actors all wait on activities that never complete.
void StepPlayer::check_finished() const {
  for (std::size_t rank = 0; rank < times_.size(); ++rank) {
    if (!times_[rank].finished) {
      throw std::runtime_error("the step programs deadlocked: GPU " + std::to_string(rank) +
                               " waits for a message no other GPU sends (a bug in Tessera's "
                               "step programs; please report it with this scenario)");
    }
  }
}

void StepPlayer::play_communication_stream(int rank, int buckets) {
  auto& streams = *streams_[static_cast<std::size_t>(rank)];
  const auto& members = stage_group_of(rank);
  const std::size_t my_index = members.index_of(rank);
  // The data-parallel group is the one the symmetric reduction samples.
  const CollectiveContext context{fabric_,
                                  platform_.gpus_per_node,
                                  kGradientChannel,
                                  settings_.granularity,
                                  settings_.replicas,
                                  &platform_.node_rings,
                                  settings_.measured_allreduce};
  for (int bucket = 0; bucket < buckets; ++bucket) {
    streams.gradient_requests->acquire();
    const auto queued = streams.gradient_buckets.front();
    streams.gradient_buckets.pop_front();
    const double start = now();
    if (queued.reduce_scatter) {
      reduce_scatter(context, members, my_index, queued.bytes);
      record(rank, 1, "reduce-scatter ring", OpCategory::allreduce, start);
    } else {
      const auto algorithm = algorithm_for(context, members, queued.bytes);
      allreduce(context, members, my_index, queued.bytes, algorithm);
      const bool measured = plays_measured_allreduce(context, members, queued.bytes);
      record(rank, 1, "all-reduce " + (measured ? std::string("(measured)") : to_string(algorithm)),
             OpCategory::allreduce, start);
    }
    streams.gradient_done->release();
  }
}

}  // namespace tessera::sim

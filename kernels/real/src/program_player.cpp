#include "program_player.hpp"

#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "shared_table.hpp"

namespace tessera::kernels::real {
namespace {

bool layer_work(StepOpKind kind) {
  return kind == StepOpKind::compute || kind == StepOpKind::halo_start ||
         kind == StepOpKind::halo_wait || kind == StepOpKind::group_allreduce;
}

Direction pass_of(Direction direction) {
  return direction == Direction::forward ? Direction::forward : Direction::backward_data;
}

}  // namespace

ExecutedOp expected_execution(const StepOp& op) {
  switch (op.kind) {
    case StepOpKind::compute:
      return {.kind = op.kind, .layer = op.layer, .direction = op.direction, .part = op.part};
    case StepOpKind::halo_start:
      return {.kind = op.kind, .layer = op.layer, .direction = op.direction, .axis = op.axis};
    case StepOpKind::halo_wait:
      return {.kind = op.kind, .layer = op.layer};
    case StepOpKind::group_allreduce:
    case StepOpKind::group_alltoall:
    case StepOpKind::group_allgather:
    case StepOpKind::stage_send:
    case StepOpKind::stage_recv:
      return {.kind = op.kind, .layer = op.layer, .direction = op.direction};
    case StepOpKind::gradient_allreduce:
    case StepOpKind::gradient_reduce_scatter:
      return {.kind = op.kind, .bucket = op.bucket};
    case StepOpKind::gradient_wait:
      return {.kind = op.kind, .bucket = op.bucket};
    case StepOpKind::read_start:
    case StepOpKind::read_wait:
    case StepOpKind::update:
      return {.kind = op.kind};
    case StepOpKind::allocate:
    case StepOpKind::release:
    case StepOpKind::offload_start:
    case StepOpKind::offload_wait:
    case StepOpKind::prefetch_start:
    case StepOpKind::prefetch_wait:
      return {.kind = op.kind, .layer = op.layer};
  }
  return {.kind = op.kind};
}

ProgramPlayer::ProgramPlayer(const StepProgram& program, RankTensors& tensors,
                             ExecutionContext& context, float learning_rate)
    : program_(program),
      tensors_(tensors),
      context_(context),
      learning_rate_(learning_rate),
      transfers_(tensors, context),
      begins_pass_(program.ops.size(), false),
      ends_pass_(program.ops.size(), false),
      bucket_posted_(program.buckets.size(), 0.0) {
  rank_ = context.layout.global_rank;
  std::map<std::tuple<std::size_t, Direction, std::int64_t>, std::size_t> first, last;
  bool computed = false;
  for (std::size_t i = 0; i < program.ops.size(); ++i) {
    const auto& op = program.ops[i];
    if (op.kind == StepOpKind::compute) computed = true;
    if (op.kind == StepOpKind::read_wait) {
      reads_ = true;
      prefetches_ = computed;
    }
    if (!layer_work(op.kind)) continue;
    const auto key = std::make_tuple(op.layer, pass_of(op.direction), op.micro_batch);
    first.try_emplace(key, i);
    last[key] = i;
  }
  for (const auto& [key, index] : first) begins_pass_[index] = true;
  for (const auto& [key, index] : last) ends_pass_[index] = true;
}

double ProgramPlayer::since_step_start(Clock::time_point when) const {
  return std::chrono::duration<double>(when - step_start_).count();
}

void ProgramPlayer::load_input(const StepInput& input) {
  auto& device = context_.device;
  // The replica's mini-batch: this rank's shard of its samples, where the stage holds the input,
  // and every sample's targets (the micro-batches' losses take those of their samples kept here).
  const auto per_sample = static_cast<std::size_t>(tensors_.targets_per_sample());
  const auto samples =
      static_cast<std::size_t>(tensors_.micro_batch_samples() * tensors_.micro_batches());
  const auto volume_floats = static_cast<std::size_t>(tensors_.sample_floats());
  if (input.volume.size() != volume_floats || input.targets.size() != per_sample * samples) {
    throw std::invalid_argument(
        "step input has " + std::to_string(input.volume.size()) + " volume and " +
        std::to_string(input.targets.size()) + " target floats; the rank's shard needs " +
        std::to_string(volume_floats) + " and " + std::to_string(per_sample * samples));
  }
  transfers_.wait_all();  // no send still reads the samples
  if (tensors_.samples() != nullptr) {
    device.copy_to_device(input.volume.data(), tensors_.samples(), input.volume.size());
  }
  device.copy_to_device(input.targets.data(), tensors_.targets().data(), input.targets.size());
  targets_ = input.targets;
  device.synchronize();
  selected_micro_batch_ = -1;
  input_loaded_ = true;
}

void ProgramPlayer::select_micro_batch(std::int64_t micro_batch) {
  if (micro_batch == selected_micro_batch_ || targets_.empty()) return;
  selected_micro_batch_ = micro_batch;
  const auto kept = tensors_.target_samples();
  const std::int64_t first = micro_batch * tensors_.micro_batch_samples();
  const auto per_sample = tensors_.targets_per_sample();
  const auto begin = (first + kept.first) * per_sample;
  context_.targets = tensors_.targets().data() + begin;
  context_.labels.assign(targets_.begin() + begin,
                         targets_.begin() + begin + kept.count * per_sample);
  context_.first_sample = replica_first_sample_ + first;
}

void ProgramPlayer::redistribute(const StepOp& op) {
  const auto k = op.micro_batch;
  auto& state = tensors_.layer(op.layer, k);
  for (auto& link : state.inputs) {
    if (!link.gather) continue;
    auto& producer = tensors_.layer(link.producer, k);
    if (op.direction == Direction::forward) {
      link.gather->forward(tensors_.output_of(link.producer, k), link.whole->data());
    } else if (link.wants_gradient) {
      link.gather->backward(link.whole_gradient->data(), tensors_.gradient_of(link.producer, k),
                            producer.consumer_edges > 1);
    }
  }
  context_.device.synchronize();
  context_.record({.kind = op.kind, .layer = op.layer, .direction = op.direction});
}

void ProgramPlayer::before_memory_op(const StepOp& op) {
  if (op.kind != StepOpKind::release || op.layer >= tensors_.layer_count()) return;
  auto& state = tensors_.layer(op.layer, op.micro_batch);
  if (state.is_input && tensors_.runs_here(op.layer)) return;  // the samples are never freed
  auto& memory = op.memory == MemoryUse::activation_gradients ? state.gradient : state.output;
  transfers_.before_release(memory);
}

void ProgramPlayer::run(std::size_t index, StepInputSource& source, StepReport& report) {
  const StepOp& op = program_.ops[index];
  auto& layout = context_.layout;
  auto& parameters = tensors_.parameters();
  context_.current_layer = op.layer;
  select_micro_batch(op.micro_batch);
  auto begin = Clock::now();
  auto* executor_here = op.layer < tensors_.layer_count()
                            ? tensors_.layer(op.layer, op.micro_batch).executor.get()
                            : nullptr;
  if (begins_pass_[index]) executor_here->begin_pass(pass_of(op.direction));
  switch (op.kind) {
    case StepOpKind::compute: {
      auto& executor = *executor_here;
      if (op.part == StepPart::gradient_sum) {
        parameters.accumulate(op.layer);
      } else if (op.direction == Direction::forward) {
        executor.forward(op.part);
      } else if (op.direction == Direction::backward_data) {
        executor.backward_data(op.part);
      } else {
        executor.backward_filter();
      }
      context_.device.synchronize();
      context_.record(expected_execution(op));
      break;
    }
    case StepOpKind::halo_start:
      executor_here->halo_start(op.direction, op.axis);
      break;
    case StepOpKind::halo_wait:
      executor_here->halo_wait(op.direction);
      break;
    case StepOpKind::group_allreduce:
      if (op.group == CollectiveGroup::table) {
        // Named by the table's owner, as every holder knows it; above every stage transfer's
        // tag (stage_transfers.cpp numbers those).
        const auto layers = static_cast<std::int64_t>(tensors_.layer_count());
        const auto table = static_cast<std::int64_t>(context_.tables.origin.at(op.layer));
        const int tag = static_cast<int>(2 * layers * tensors_.micro_batches() + table);
        sum_table_copies(parameters.gradients(op.layer),
                         static_cast<std::size_t>(executor_here->table_floats()),
                         program_.table_stages.at(op.layer), tag, context_);
      } else if (op.group != CollectiveGroup::tensor) {
        executor_here->sum_statistics(op.direction);
      } else if (!executor_here->sum_over_tensor_group(op.direction, *layout.tensor_group)) {
        tensors_.sum_over_tensor_group(op, *layout.tensor_group);
      }
      context_.record(expected_execution(op));
      break;
    case StepOpKind::group_alltoall:
      redistribute(op);
      break;
    case StepOpKind::group_allgather:
      if (op.group == CollectiveGroup::tensor) {
        tensors_.gather_over_tensor_group(op, *layout.tensor_group);
      } else if (op.layer == SIZE_MAX) {
        // Sharded weights (ZeRO): every layer's after the update, or one layer's before its pass.
        parameters.gather_all(*layout.gradient_group);
      } else {
        parameters.gather(op.layer, *layout.gradient_group);
      }
      context_.record(expected_execution(op));
      break;
    case StepOpKind::stage_send:
      transfers_.send(op);
      break;
    case StepOpKind::stage_recv: {
      // Waiting for the other stage is the pipeline's bubble: left to idle, as the simulator
      // leaves it; the transfer after it is communication.
      const double waited = transfers_.receive(op);
      const auto moving_since = begin + std::chrono::duration_cast<Clock::duration>(
                                            std::chrono::duration<double>(waited));
      report.timeline.push_back({.gpu = rank_,
                                 .name = op.label + " (waiting: pipeline bubble)",
                                 .category = op.category,
                                 .start_seconds = since_step_start(begin),
                                 .end_seconds = since_step_start(moving_since),
                                 .source = Provenance::measured,
                                 .idle = true});
      begin = moving_since;
      break;
    }
    case StepOpKind::gradient_allreduce:
      bucket_posted_.at(static_cast<std::size_t>(op.bucket)) = since_step_start(begin);
      parameters.start(op.bucket,
                       layout.gradient_group->size() > 1 ? layout.gradient_group.get() : nullptr,
                       context_);
      break;
    case StepOpKind::gradient_reduce_scatter:
      bucket_posted_.at(static_cast<std::size_t>(op.bucket)) = since_step_start(begin);
      parameters.start_reduce_scatter(op.bucket, *layout.gradient_group, context_);
      break;
    case StepOpKind::gradient_wait:
      parameters.wait(op.bucket, context_);
      break;
    case StepOpKind::read_start:
      // The source reads ahead on its own thread (the prefetcher); the span starts here.
      read_started_ = since_step_start(begin);
      context_.record(expected_execution(op));
      break;
    case StepOpKind::read_wait: {
      double stall_seconds = 0;
      load_input(source.next(stall_seconds));
      report.read_source = source.last_source();
      context_.record(expected_execution(op));
      break;
    }
    case StepOpKind::update:
      parameters.optimizer_step(learning_rate_, context_.step + 1, context_);
      context_.device.synchronize();
      break;
    case StepOpKind::allocate:
    case StepOpKind::release: {
      before_memory_op(op);
      const double change = tensors_.apply_memory_op(op);
      if (change != 0) report.memory.change(since_step_start(Clock::now()), change);
      context_.record(expected_execution(op));
      // Bookkeeping: its time is left to idle, not to a category.
      return;
    }
    case StepOpKind::offload_start:
    case StepOpKind::prefetch_start:
      if (copies_started_ < 0) copies_started_ = since_step_start(begin);
      tensors_.apply_memory_op(op);
      if (op.kind == StepOpKind::offload_start) report.offloaded_bytes += op.bytes;
      context_.record(expected_execution(op));
      break;
    case StepOpKind::offload_wait:
    case StepOpKind::prefetch_wait:
      context_.device.wait_for_copies();
      context_.record(expected_execution(op));
      break;
  }
  if (ends_pass_[index]) {
    executor_here->end_pass(pass_of(op.direction));
    if (op.direction != Direction::forward) tensors_.finish_backward(op.layer, op.micro_batch);
    context_.device.synchronize();
  }
  transfers_.progress();
  const auto end = Clock::now();
  const double seconds = std::chrono::duration<double>(end - begin).count();
  auto& b = report.breakdown;
  const std::size_t layers = tensors_.layer_count();
  switch (op.category) {
    case OpCategory::compute:
      b.compute_seconds += seconds;
      if (op.kind == StepOpKind::update) {
        report.layer_compute[2 * layers].seconds += seconds;
      } else {
        report.layer_compute[op.layer + (op.direction == Direction::forward ? 0 : layers)]
            .seconds += seconds;
      }
      break;
    case OpCategory::halo:
      b.halo_seconds += seconds;
      break;
    case OpCategory::allreduce:
      b.allreduce_seconds += seconds;
      break;
    case OpCategory::other_communication:
      b.other_communication_seconds += seconds;
      break;
    case OpCategory::io:
      b.io_seconds += seconds;
      break;
    case OpCategory::offload:
      b.offload_seconds += seconds;
      break;
  }
  const double start_s = since_step_start(begin), end_s = since_step_start(end);
  report.timeline.push_back(
      {rank_, TimelineTrack::compute, op.label, op.category, start_s, end_s, Provenance::measured});
  // The buckets' all-reduces on the communication track, from their posting to the wait that
  // completed them (at most that long: the transport does not say when it finished).
  if (op.kind == StepOpKind::gradient_wait) {
    const bool parameters_sharded = tensors_.parameters().sharded();
    const std::size_t until =
        op.bucket >= 0 ? static_cast<std::size_t>(op.bucket) + 1 : bucket_posted_.size();
    for (std::size_t bucket = 0; bucket < until; ++bucket) {
      if (bucket_posted_[bucket] <= 0) continue;
      report.timeline.push_back({rank_, TimelineTrack::communication,
                                 (parameters_sharded ? "reduce-scatter of gradient bucket "
                                                     : "all-reduce of gradient bucket ") +
                                     std::to_string(bucket),
                                 OpCategory::allreduce, bucket_posted_[bucket], end_s,
                                 Provenance::measured});
      bucket_posted_[bucket] = 0;
    }
  }
  // The memory stream's copies, from the first one started to the wait that completed them (at
  // most that long).
  if ((op.kind == StepOpKind::offload_wait || op.kind == StepOpKind::prefetch_wait) &&
      copies_started_ >= 0) {
    report.timeline.push_back(
        {rank_, TimelineTrack::memory_copies,
         op.kind == StepOpKind::offload_wait ? "offload to host" : "prefetch from host",
         OpCategory::offload, copies_started_, end_s, Provenance::measured});
    copies_started_ = -1;
  }
  if (op.kind == StepOpKind::read_wait) {
    report.timeline.push_back({rank_, TimelineTrack::input_reads, "input read", OpCategory::io,
                               prefetches_ ? read_started_ : start_s, end_s, Provenance::measured});
  }
  // After the op's time: the copy is the check's, not the step's.
  if (ends_pass_[index] && op.direction == Direction::forward && op.layer < kept_.size() &&
      keeps_[op.layer]) {
    auto& kept = kept_[op.layer];
    const std::size_t floats = tensors_.output_floats(op.layer, op.micro_batch);
    kept.resize(kept.size() + floats);
    context_.device.copy_to_host(tensors_.output_of(op.layer, op.micro_batch),
                                 kept.data() + kept.size() - floats, floats);
  }
}

void ProgramPlayer::keep_outputs_of(const std::vector<std::size_t>& layers) {
  keeps_.assign(tensors_.layer_count(), false);
  kept_.assign(tensors_.layer_count(), {});
  for (const std::size_t layer : layers) keeps_.at(layer) = true;
}

const std::vector<float>& ProgramPlayer::kept_output_of(std::size_t layer) const {
  if (layer >= keeps_.size() || !keeps_[layer]) {
    throw std::logic_error("layer " + std::to_string(layer) + "'s output was not kept");
  }
  return kept_[layer];
}

StepReport ProgramPlayer::play(StepInputSource& source) {
  auto& layout = context_.layout;
  StepReport report;
  const std::size_t count = tensors_.layer_count();
  report.layer_compute.resize(2 * count + 1);
  for (std::size_t i = 0; i < count; ++i) {
    report.layer_compute[i] = {tensors_.layer(i).name, "forward", 0};
    report.layer_compute[count + i] = {tensors_.layer(i).name, "backward", 0};
  }
  report.layer_compute[2 * count] = {"optimizer", "update", 0};
  // Samples the program does not read (synthetic ones, standing for data already on the device),
  // or a prefetching program's first, before the step that reads the next.
  if (!reads_ || (prefetches_ && !input_loaded_)) {
    double ignored = 0;
    load_input(source.next(ignored));
    if (reads_) report.read_source = source.last_source();
  }
  if (prefetches_) input_loaded_ = false;  // this step's read brings the next step's samples
  context_.executed.clear();
  for (auto& kept : kept_) kept.clear();
  replica_first_sample_ = context_.step * layout.global_batch + layout.samples_before;
  selected_micro_batch_ = -1;
  step_start_ = Clock::now();
  report.memory.change(0, context_.device.bytes_in_use());  // what stays for the whole run
  for (std::size_t i = 0; i < program_.ops.size(); ++i) run(i, source, report);
  transfers_.wait_all();
  report.step_seconds = since_step_start(Clock::now());
  report.memory.finish(report.step_seconds);
  report.breakdown.idle_seconds = std::max(0.0, report.step_seconds - report.breakdown.total());
  report.executed = context_.executed;
  return report;
}

}  // namespace tessera::kernels::real

#include "program_player.hpp"

#include <map>
#include <stdexcept>
#include <utility>

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
    case StepOpKind::stage_send:
    case StepOpKind::stage_recv:
      return {.kind = op.kind, .layer = op.layer, .direction = op.direction};
    case StepOpKind::gradient_allreduce:
      return {.kind = op.kind, .bucket = op.bucket};
    case StepOpKind::gradient_wait:
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
      begins_pass_(program.ops.size(), false),
      ends_pass_(program.ops.size(), false),
      bucket_posted_(program.buckets.size(), 0.0) {
  const auto& layout = context.layout;
  rank_ = static_cast<int>(layout.replica * layout.shards + layout.shard);
  std::map<std::pair<std::size_t, Direction>, std::size_t> first, last;
  bool computed = false;
  for (std::size_t i = 0; i < program.ops.size(); ++i) {
    const auto& op = program.ops[i];
    if (op.kind == StepOpKind::compute) computed = true;
    if (op.kind == StepOpKind::read_wait) {
      reads_ = true;
      prefetches_ = computed;
    }
    if (!layer_work(op.kind)) continue;
    const auto key = std::make_pair(op.layer, pass_of(op.direction));
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
  auto& first = tensors_.layer(0);
  const auto kept = tensors_.target_samples();
  auto& targets = tensors_.targets();
  // The targets of the replica's mini-batch; the losses take those of the samples kept here.
  const auto per_sample = static_cast<std::size_t>(tensors_.targets_per_sample());
  const std::size_t replica_targets = per_sample * static_cast<std::size_t>(first.shapes.batch);
  if (input.volume.size() != static_cast<std::size_t>(first.shapes.output_floats) ||
      input.targets.size() != replica_targets) {
    throw std::invalid_argument(
        "step input has " + std::to_string(input.volume.size()) + " volume and " +
        std::to_string(input.targets.size()) + " target floats; the rank's shard needs " +
        std::to_string(first.shapes.output_floats) + " and " + std::to_string(replica_targets));
  }
  device.copy_to_device(input.volume.data(), first.output->data(), input.volume.size());
  const auto begin = input.targets.begin() +
                     static_cast<std::ptrdiff_t>(static_cast<std::size_t>(kept.first) * per_sample);
  const auto end =
      begin + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(kept.count) * per_sample);
  device.copy_to_device(&*begin, targets.data(), static_cast<std::size_t>(end - begin));
  context_.labels.assign(begin, end);  // class labels, where the losses classify
  device.synchronize();
  context_.targets = targets.data();
  input_loaded_ = true;
}

void ProgramPlayer::redistribute(const StepOp& op) {
  auto& state = tensors_.layer(op.layer);
  for (auto& link : state.inputs) {
    if (!link.gather) continue;
    auto& producer = tensors_.layer(link.producer);
    if (op.direction == Direction::forward) {
      link.gather->forward(producer.output->data(), link.whole->data());
    } else if (!producer.is_input) {
      link.gather->backward(link.whole_gradient->data(), producer.gradient->data(),
                            producer.consumer_edges > 1);
    }
  }
  context_.device.synchronize();
  context_.record({.kind = op.kind, .layer = op.layer, .direction = op.direction});
}

void ProgramPlayer::run(std::size_t index, StepInputSource& source, StepReport& report) {
  const StepOp& op = program_.ops[index];
  auto& layout = context_.layout;
  auto& parameters = tensors_.parameters();
  context_.current_layer = op.layer;
  const auto begin = Clock::now();
  if (begins_pass_[index]) tensors_.layer(op.layer).executor->begin_pass(pass_of(op.direction));
  switch (op.kind) {
    case StepOpKind::compute: {
      auto& executor = *tensors_.layer(op.layer).executor;
      if (op.direction == Direction::forward) {
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
      tensors_.layer(op.layer).executor->halo_start(op.direction, op.axis);
      break;
    case StepOpKind::halo_wait:
      tensors_.layer(op.layer).executor->halo_wait(op.direction);
      break;
    case StepOpKind::group_allreduce:
      tensors_.layer(op.layer).executor->sum_statistics(op.direction);
      context_.record(expected_execution(op));
      break;
    case StepOpKind::group_alltoall:
      redistribute(op);
      break;
    case StepOpKind::stage_send:
    case StepOpKind::stage_recv:
      throw std::invalid_argument(
          "model-parallel stages are not yet supported by the real backend (" + op.label + ")");
    case StepOpKind::gradient_allreduce:
      bucket_posted_.at(static_cast<std::size_t>(op.bucket)) = since_step_start(begin);
      parameters.start(op.bucket,
                       layout.gradient_group->size() > 1 ? layout.gradient_group.get() : nullptr,
                       context_);
      break;
    case StepOpKind::gradient_wait:
      parameters.wait_all(context_);
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
    tensors_.layer(op.layer).executor->end_pass(pass_of(op.direction));
    if (op.direction != Direction::forward) tensors_.accumulate_input_gradients(op.layer);
    context_.device.synchronize();
  }
  const auto end = Clock::now();
  const double seconds = std::chrono::duration<double>(end - begin).count();
  auto& b = report.breakdown;
  const std::size_t layers = tensors_.layers().size();
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
    for (std::size_t bucket = 0; bucket < bucket_posted_.size(); ++bucket) {
      if (bucket_posted_[bucket] <= 0) continue;
      report.timeline.push_back({rank_, TimelineTrack::communication,
                                 "all-reduce of gradient bucket " + std::to_string(bucket),
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
}

StepReport ProgramPlayer::play(StepInputSource& source) {
  auto& layout = context_.layout;
  auto& first = tensors_.layer(0);
  StepReport report;
  const std::size_t count = tensors_.layers().size();
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
  context_.first_sample =
      context_.step * layout.replicas * first.shapes.batch + layout.replica * first.shapes.batch;
  step_start_ = Clock::now();
  report.memory.change(0, context_.device.bytes_in_use());  // what stays for the whole run
  for (std::size_t i = 0; i < program_.ops.size(); ++i) run(i, source, report);
  report.step_seconds = since_step_start(Clock::now());
  report.memory.finish(report.step_seconds);
  report.breakdown.idle_seconds = std::max(0.0, report.step_seconds - report.breakdown.total());
  report.executed = context_.executed;
  return report;
}

}  // namespace tessera::kernels::real

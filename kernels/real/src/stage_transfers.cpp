#include "stage_transfers.hpp"

#include <chrono>
#include <stdexcept>
#include <string>

#include "tessera/kernels/layer_kernels.hpp"

namespace tessera::kernels::real {

float* StageTransfers::tensor_of(const StepOp& op) {
  float* data = op.direction == Direction::forward ? tensors_.output_of(op.layer, op.micro_batch)
                                                   : tensors_.gradient_of(op.layer, op.micro_batch);
  if (data == nullptr) {
    throw std::logic_error("the step program moves " + op.label +
                           " while this stage holds no buffer for it");
  }
  return data;
}

int StageTransfers::tag_of(const StepOp& op) const {
  const auto pass = op.direction == Direction::forward ? 0 : 1;
  return static_cast<int>(
      (static_cast<std::int64_t>(op.layer) * 2 + pass) * tensors_.micro_batches() + op.micro_batch);
}

void StageTransfers::send(const StepOp& op) {
  const float* data = tensor_of(op);
  const auto floats =
      static_cast<std::size_t>(tensors_.layer(op.layer, op.micro_batch).shapes.output_floats);
  context_.device.synchronize();  // written before the transport reads it
  pending_.push_back(
      {data, context_.layout.stage_group->send(data, floats, op.peer_stage, tag_of(op))});
  context_.record({.kind = op.kind, .layer = op.layer, .direction = op.direction});
}

double StageTransfers::receive(const StepOp& op) {
  auto& group = *context_.layout.stage_group;
  const int tag = tag_of(op);
  const auto waiting = std::chrono::steady_clock::now();
  group.wait_for_message(op.peer_stage, tag);
  const double waited = seconds_since(waiting);
  float* into = tensor_of(op);
  auto& state = tensors_.layer(op.layer, op.micro_batch);
  const auto floats = static_cast<std::size_t>(state.shapes.output_floats);
  // A gradient with several readers adds into what the others left (zeroed when allocated).
  const bool adds = op.direction != Direction::forward && state.consumer_edges > 1;
  std::unique_ptr<DeviceMemory> scratch;
  if (adds) scratch = context_.device.allocate(floats * sizeof(float));
  group.receive(adds ? scratch->data() : into, floats, op.peer_stage, tag)->wait();
  if (adds) {
    context_.device.layers().axpy(state.shapes.output_floats, 1.0F, scratch->data(), into);
    context_.device.synchronize();
  }
  context_.record({.kind = op.kind, .layer = op.layer, .direction = op.direction});
  return waited;
}

void StageTransfers::before_release(std::unique_ptr<DeviceMemory>& memory) {
  if (!memory) return;
  for (auto& send : pending_) {
    if (send.data == memory->data()) {
      send.kept_alive = std::move(memory);
      return;
    }
  }
}

void StageTransfers::progress() {
  for (auto& send : pending_) send.request->progress();
}

void StageTransfers::wait_all() {
  for (auto& send : pending_) send.request->wait();
  pending_.clear();
}

}  // namespace tessera::kernels::real

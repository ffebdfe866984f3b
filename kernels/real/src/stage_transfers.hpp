#pragma once
// The tensors a model-parallel stage exchanges with the replica's other stages (the step
// program's stage_send and stage_recv ops), on the stage group: a layer's output in forward, its
// gradient in backward, one message per micro-batch told apart by its tag. Sends go out without
// waiting, as the simulator's do; a buffer released while its send is in flight is kept until the
// send is done (waiting there could deadlock: the receiver may want another message first). A
// receive first
// waits for the message to arrive (the pipeline's bubble: time the stage had nothing to do) and
// then takes it (communication). A gradient adds into what the stage's own readers left there.
#include <memory>
#include <vector>

#include "execution_context.hpp"
#include "rank_tensors.hpp"
#include "tessera/core/strategy/step_program.hpp"
#include "tessera/kernels/communicator.hpp"

namespace tessera::kernels::real {

class StageTransfers {
 public:
  StageTransfers(RankTensors& tensors, ExecutionContext& context)
      : tensors_(tensors), context_(context) {}

  void send(const StepOp& op);
  // Returns the seconds spent waiting for the message to arrive.
  double receive(const StepOp& op);
  // Before `memory` is freed: a send still reading it takes it over, to free it once done.
  void before_release(std::unique_ptr<DeviceMemory>& memory);
  // Lets the sends in flight move on (between ops).
  void progress();
  void wait_all();

 private:
  struct PendingSend {
    const float* data = nullptr;
    std::unique_ptr<CommRequest> request;
    std::unique_ptr<DeviceMemory> kept_alive;
  };
  // The tensor an op moves on this rank, and the tag both stages give its message.
  float* tensor_of(const StepOp& op);
  int tag_of(const StepOp& op) const;

  RankTensors& tensors_;
  ExecutionContext& context_;
  std::vector<PendingSend> pending_;
};

}  // namespace tessera::kernels::real

#pragma once
// One layer of the model as this rank runs it, op by op in the order the step program gives
// (program_player.hpp dispatches each op to its layer's executor): the forward in parts, the
// backward's data and filter kernels, and for layers split over the spatial group their halo
// exchanges and group sums. The tensors are bound once (device memory, owned by RankTensors).
// Input gradients are overwritten; a null one is not wanted.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tensor_part.hpp"
#include "tessera/core/model/model_graph.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"
#include "tessera/core/strategy/step_program.hpp"
#include "tessera/kernels/communicator.hpp"
#include "tessera/kernels/convolution_runner.hpp"

namespace tessera::kernels::real {

struct ExecutionContext;

// The rank's tensors around a layer: floats per tensor (batch included) and voxels per channel.
struct LocalShapes {
  std::int64_t batch = 1;
  std::int64_t first_sample = 0;  // the first of `batch` in the replica's mini-batch
  // After the redistribution: the spatial group's ranks hold the replica's samples between them.
  bool shares_samples = false;
  std::vector<std::int64_t> input_floats;
  std::vector<std::int64_t> input_voxels;
  std::int64_t output_floats = 0;
  std::int64_t output_voxels = 1;
  // Of a layer split over the tensor group: the executor runs the layer's local form and
  // initialises its parameters as its part of the whole layer's.
  TensorPart tensor;
};

// Device memory around a layer: its inputs and output, and their gradients.
struct LayerTensors {
  std::vector<const float*> x;
  float* y = nullptr;
  const float* dy = nullptr;
  std::vector<float*> dx;  // null where the input's gradient is not wanted
};

class LayerExecutor {
 public:
  explicit LayerExecutor(std::string name) : name_(std::move(name)) {}
  virtual ~LayerExecutor() = default;
  const std::string& name() const { return name_; }

  virtual std::int64_t parameter_floats() const { return 0; }
  // Initial values, the same on every rank (drawn from `seed` and the layer's index); a rank of
  // a tensor group takes its part of the whole layer's.
  virtual void initialize(std::uint64_t /*seed*/, std::span<float> /*host_parameters*/) const {}
  // Of a layer split over a tensor group: this rank's part of the whole layer's parameters
  // (`whole` in the unsplit layer's layout); the values themselves for a whole layer.
  virtual void take_part(std::span<const float> whole, std::span<float> part) const;
  void bind_parameters(float* weights, float* gradients) {
    weights_ = weights;
    gradients_ = gradients;
  }
  // A tied layer's parameters of its own beside the table it reads (BERT's decoder bias): bound
  // where the layer has parameters and another layer holds its table (shared_table.hpp).
  void bind_untied_parameters(float* weights, float* gradients) {
    untied_weights_ = weights;
    untied_gradients_ = gradients;
  }
  // Of a table holder's parameters, those of the tied table (which the stages holding a copy
  // sum): all of them but where the layer keeps others beside it.
  virtual std::int64_t table_floats() const { return parameter_floats(); }
  void bind_tensors(LayerTensors tensors) { t_ = std::move(tensors); }

  // Around each pass's ops (forward: Direction::forward; backward: Direction::backward_data):
  // a split layer loads its input into its haloed buffer first and stores the input gradients
  // once the last exchange is done.
  virtual void begin_pass(Direction /*pass*/) {}
  virtual void end_pass(Direction /*pass*/) {}
  virtual void forward(StepPart part) = 0;
  // The input gradients, and for batch-norm its parameters' gradients too (they come from the
  // same sums).
  virtual void backward_data(StepPart /*part*/) {}
  virtual void backward_filter() {}
  // One axis's halo exchange of a split window layer: forward fills the input halos, backward
  // returns the gradients of the halo planes to their owners.
  virtual void halo_start(Direction pass, int axis);
  virtual void halo_wait(Direction pass);
  // Batch-norm with global statistics: the spatial group's sum between statistics and apply.
  virtual void sum_statistics(Direction pass);
  // The tensor group's all-reduce after a pass of a split layer (tensor_split.hpp). Returns
  // whether the executor made it itself (a loss over split classes sums its per-position
  // figures); otherwise the trainer sums the output (forward) or the input's gradient
  // (backward) as they are.
  virtual bool sum_over_tensor_group(Direction /*pass*/, Communicator& /*group*/) { return false; }
  // The loss of the last forward (loss layers only).
  virtual double loss() const { return 0; }
  // Convolution problems run so far on the library's choice instead of a plan from the program.
  virtual ConvolutionPlanCounts convolution_plan_counts() const { return {}; }

 protected:
  [[noreturn]] void refuse(const std::string& op) const;

  std::string name_;
  LayerTensors t_;
  float* weights_ = nullptr;
  float* gradients_ = nullptr;
  float* untied_weights_ = nullptr;
  float* untied_gradients_ = nullptr;
};

// The signatures of the executors' factories, which declare them: one that needs its layer only,
// one that reads the model and the program too (tied tables, a sampled softmax's labels).
using LayerExecutorFactory = std::unique_ptr<LayerExecutor>(const ResolvedLayer& layer,
                                                            const LocalShapes& shapes,
                                                            ExecutionContext& context);
using ModelExecutorFactory = std::unique_ptr<LayerExecutor>(const ModelGraph& model,
                                                            std::size_t index,
                                                            const LocalShapes& shapes,
                                                            const StepProgram& program,
                                                            ExecutionContext& context);

// `program` is the step program the rank plays: an executor takes from its layer's ops how its
// kernels run (micro-batching plans, whether a split convolution overlaps its interior, whether
// batch-norm sums over the group). Throws std::invalid_argument naming the layer when the real
// backend cannot run it (yet).
std::unique_ptr<LayerExecutor> make_layer_executor(const ModelGraph& model, std::size_t index,
                                                   bool spatially_split, const LocalShapes& shapes,
                                                   const StepProgram& program,
                                                   ExecutionContext& context);

// Whether `program` has an op of `kind` for `layer` (in `part`, for compute ops).
bool program_has(const StepProgram& program, std::size_t layer, StepOpKind kind,
                 StepPart part = StepPart::whole);

// Uniform values in [-bound, bound) from a counter-based generator (identical on every platform
// and rank).
void fill_uniform(std::uint64_t seed, std::uint64_t stream, float bound, std::span<float> values);
// The same values for `count` parameters: a whole layer's, of which a rank of a tensor group
// takes its part.
std::vector<float> uniform_values(std::uint64_t seed, std::uint64_t stream, float bound,
                                  std::int64_t count);
std::uint64_t mix_seed(std::uint64_t a, std::uint64_t b);

}  // namespace tessera::kernels::real

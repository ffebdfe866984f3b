#pragma once
// Tied tables in the real backend (shared_table.cpp): which layer holds the parameters a layer
// works on, in which order readers write a table's gradient, and the sum of a table's gradients
// over the stages holding a copy (core's table_copies.hpp).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "execution_context.hpp"
#include "tessera/core/model/model_graph.hpp"
#include "tessera/core/strategy/step_program.hpp"

namespace tessera::kernels::real {

// The layer whose parameters `index` reads and whose gradients it adds to: a tied layer's table
// owner, or the table's copy on its stage, else the layer itself (context.tables, which
// RankTensors fills before it builds the executors).
std::size_t parameter_owner(std::size_t index, const ExecutionContext& context);
// 0 where layer `index` writes its table's gradient first in the program (every micro-batch),
// 1 where another reader of the table on its stage wrote it before.
float table_gradient_beta(const ModelGraph& model, std::size_t index, const StepProgram& program,
                          const ExecutionContext& context);
// A table's initial values (uniform within 0.1, as MLPerf GNMT's embeddings): `rows` x
// `dimension`, the whole table's, whichever layer holds it.
std::vector<float> table_initial_values(std::uint64_t seed, std::int64_t rows,
                                        std::int64_t dimension);
// After the data-parallel sums: the gradients of a tied table held on `stages` (ascending), summed
// over the stages in that order on every holder, so that each copy takes the same update.
void sum_table_copies(float* gradients, std::size_t floats, const std::vector<int>& stages, int tag,
                      ExecutionContext& context);

}  // namespace tessera::kernels::real

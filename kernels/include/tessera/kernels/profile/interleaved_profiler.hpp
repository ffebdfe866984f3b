#pragma once
// A profile measured again between the steps of a real run (`tessera run --backend real
// --interleaved-profile`), so that a comparison's two sides see the same machine: on a shared
// machine the speed moves over seconds and minutes, and a profile measured before training saw
// other moments than the training did (docs/measurements/2026-12-01-cpu-interleaved-profile.md).
// Every successful row the earlier profile holds for this rank's kernels (every algorithm and
// micro-batch size, so that a plan made from the new rows chooses among the same candidates) and
// optimizer updates and gradient sums is run again, one run per visit, in turn, in the time slots
// the trainer leaves between its measured steps; each row's new time is the median over its visits.
// Where the ranks go row by row together, the all-reduces of the step's gradient buckets among all
// of them are timed too, one size per slot after the kernels' rows, warm as `tessera profile` times
// them (rows "allreduce", "bytes B ranks R" at the buckets' own sizes). With several ranks and
// time_rank_passes(), every other slot (the first among them) is instead a pass over the step's
// kernels (each at its whole batch with the fastest algorithm, and each update, once), a moment of
// the machine's rank jitter (core's rank_jitter.hpp): the pass's rows over their medians say how
// much slower than usual the rank computed then, written as a "rank_pass" row per pass
// (rank_passes.hpp). A pass is about a step's compute, so that a rank's slowdown is read over as
// long as a step's synchronisation samples it: single rows' run-to-run spread, which a step's many
// kernels average out, would read as jitter (docs/measurements/2026-12-04-cpu-rank-jitter.md).
//
// Collective: every rank of the point calls measure_for() after each measured step. The ranks go
// one row at a time together, as `tessera profile` does under mpirun, each timing the same row
// or, at a pipelined point, a row of its own drawn in turn (RowPairing). Running the same row, a
// rank done first runs it on until the others are done, so no row is timed beside an idle rank;
// at a pipelined point it waits, as a stage does for the other's message.
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/point/profile_plan.hpp"
#include "tessera/kernels/profile/kernel_profiler.hpp"

namespace tessera::kernels {

class Communicator;
class CachePreparation;
class Device;

// How the ranks' rows meet. At a point whose ranks run the same kernels at once (data and
// spatial parallelism) each row is timed beside the same row on the other ranks. At a pipelined
// point each rank times its own stage's rows in an order drawn anew each round, so that over its
// visits a row meets the other stages' kernels in turn, as in a pipelined step: after every rank
// prepared its caches (so that no row runs beside a write of twice the last-level cache, which
// no step does), a row shorter than the longest of the others' starts at a moment drawn within
// it (by the earlier profile's times), as a stage's kernel meets the other stages' at any moment
// of theirs; a rank done first then waits (a stage done first waits for a message), so the
// longer row has a busy neighbour for about the share the other stage computes.
enum class RowPairing { same_row, drawn };

class InterleavedProfiler {
 public:
  // `kernels` and `parameter_kernels`: what this rank runs at the point; `earlier`: the profile the
  // run planned from (its rows on `device` are the ones timed again). The options' caches and
  // skipped algorithms apply; their measurement budget does not (one run per visit).
  // `allreduce_bytes`: the sizes the step all-reduces among all of `ranks` (its gradient
  // buckets'), timed with same_row pairing; every rank must give the same ones.
  InterleavedProfiler(Device& device, Communicator& ranks, std::vector<KernelToProfile> kernels,
                      std::vector<ParameterKernelToProfile> parameter_kernels,
                      const ProfileDatabase& earlier, const ProfilerOptions& options,
                      RowPairing pairing = RowPairing::same_row,
                      const std::vector<double>& allreduce_bytes = {});
  ~InterleavedProfiler();
  InterleavedProfiler(const InterleavedProfiler&) = delete;
  InterleavedProfiler& operator=(const InterleavedProfiler&) = delete;

  // Times rows, each rank its next one, until `seconds` have passed on some rank; after
  // time_rank_passes(), every other call, the first among them, times a pass instead, however
  // long it takes.
  void measure_for(double seconds);
  // From now on, with several ranks, every other slot is a pass (collective: all ranks or none).
  void time_rank_passes();

  // This rank's rows visited at least once, each with its median time; the all-reduces'
  // among them.
  ProfileDatabase medians() const;
  // A rank_pass row per pass in which this rank timed a row; none without passes.
  ProfileDatabase rank_passes() const;
  std::size_t row_count() const;
  // The all-reduce sizes timed after the rows.
  std::size_t allreduce_count() const;
  // What the timed runs found in the caches (the options').
  RunCaches caches() const;
  // The fewest visits any row had (0 while some row was never visited).
  std::size_t fewest_visits() const;

 private:
  struct Row;
  struct Visit;
  struct Allreduce;
  void time_next_allreduce();
  Row* next_row();
  std::unique_ptr<Visit> open_visit(const Row& row);
  std::optional<double> time_row(Row& row);
  void start_with_the_others(const Row* row);
  void time_pass();
  std::vector<std::size_t> pass_rows() const;

  Device& device_;
  Communicator& ranks_;
  std::vector<KernelToProfile> kernels_;
  std::vector<ParameterKernelToProfile> parameter_kernels_;
  std::vector<Row> rows_;
  std::vector<std::size_t> order_;  // rows_' indices in the order of this round
  std::size_t next_ = 0;
  std::mt19937 draws_;
  RowPairing pairing_;
  std::unique_ptr<CachePreparation> caches_;
  std::vector<Allreduce> allreduces_;
  std::size_t next_allreduce_ = 0;
  // Per measure_for call, the rows it timed (rows_' index) and their times.
  struct Slot {
    bool pass = false;
    std::vector<std::pair<std::size_t, double>> rows;
  };
  std::vector<Slot> slots_;
  bool rank_passes_ = false;
};

}  // namespace tessera::kernels

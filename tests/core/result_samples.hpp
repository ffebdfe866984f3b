#pragma once
// A result point with every field set to a value that tests the schema's round trips: extreme
// doubles (the smallest subnormal, the largest finite), every provenance kind, a note.
#include <vector>

#include "tessera/core/result/result_schema.hpp"

namespace tessera::test {

inline PointResult sample_point() {
  PointResult p;
  p.scenario = "cosmoflow_strong";
  p.point = 3;
  p.backend = "sim";
  p.gpus = 16;
  p.data = 2;
  p.spatial_grid = "4x2x1";
  p.model_degree = 1;
  p.tensor_degree = 2;
  p.mini_batch = 4;
  p.global_batch = 8;
  p.status = PointStatus::ok;
  p.step_seconds = 0.1;
  p.samples_per_second = 80.00000000000001;
  p.first_epoch_step_seconds = 0.4375;
  p.staging_seconds = 812.25;
  p.input_source = "peer_memory";
  p.breakdown.compute_seconds = 0.07;
  p.breakdown.halo_seconds = 1e-300;
  p.breakdown.allreduce_seconds = 0.012345678901234567;
  p.breakdown.other_communication_seconds = 5e-324;  // smallest subnormal
  p.breakdown.io_seconds = 1.0 / 3.0;
  p.breakdown.offload_seconds = 0;
  p.breakdown.idle_seconds = 2.5e-7;
  p.peak_memory_bytes = 17179869184.0;
  p.device_capacity_bytes = 1.7976931348623157e308;
  p.fits = true;
  p.time_provenance = Provenance::simulated;
  p.compute_provenance = Provenance::mixed;
  p.memory_provenance = Provenance::estimated;
  p.epochs = 90.25;
  p.steps_to_target = 14414.0625;
  p.time_to_train_seconds = 1441.40625;
  p.note = "network CM02";
  return p;
}

// Four points: the above, one that does not fit with a note of quotes, commas and a newline, a
// skipped one and a failed one.
inline std::vector<PointResult> sample_points() {
  auto first = sample_point();
  auto second = sample_point();
  second.point = 4;
  second.status = PointStatus::does_not_fit;
  second.fits = false;
  second.note = "needs 93.1 GiB, \"device\" has 80 GiB,\nsee memory, then: retry";
  second.scenario = "name, with comma";
  second.time_provenance = Provenance::none;
  second.compute_provenance = Provenance::profile;
  second.memory_provenance = Provenance::measured;
  auto third = sample_point();
  third.point = 5;
  third.status = PointStatus::skipped;
  third.note = "";
  third.backend = "real";
  third.time_provenance = Provenance::measured;
  third.compute_provenance = Provenance::roofline;
  auto fourth = sample_point();
  fourth.point = 6;
  fourth.status = PointStatus::failed;
  fourth.note = "\"quoted\"";
  fourth.spatial_grid = "1";
  fourth.step_seconds = 123456789.125;
  fourth.breakdown = {};
  return {first, second, third, fourth};
}

// A run document of those points with every metadata field set.
inline RunResult sample_run() {
  RunResult run;
  run.scenario = "cosmoflow_strong";
  run.scenario_file = "scenarios/cosmoflow_strong.yaml";
  run.backend = "sim";
  run.tessera_version = "0.1.0";
  run.created_utc = "2024-06-11T12:00:00Z";
  run.platform = "dgx-a100 x 4";
  run.model = "cosmoflow";
  run.settings = {{"network_model", "CM02"}, {"gradient_bucket_bytes", 26214400}};
  run.points = sample_points();
  return run;
}

}  // namespace tessera::test

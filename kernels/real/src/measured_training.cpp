#include "measured_training.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>

#include "tessera/core/common/lower_median.hpp"
#include "tessera/kernels/real/real_point.hpp"

namespace tessera::kernels::real {
namespace {

struct IndexedReport {
  std::int64_t step = 0;
  StepReport report;
};

IndexedReport median_step(std::vector<IndexedReport> reports) {
  return lower_median(std::move(reports), [](const IndexedReport& a, const IndexedReport& b) {
    return a.report.step_seconds < b.report.step_seconds;
  });
}

}  // namespace

Measurement train(Trainer& trainer, StepInputSource& source, Communicator& ranks,
                  std::int64_t warmup, std::int64_t measured, const InputPlan& plan,
                  const std::function<void(double step_seconds)>& after_measured_step) {
  Measurement measurement;
  std::vector<IndexedReport> steady, first_epoch;
  for (std::int64_t step = 0; step < warmup + measured; ++step) {
    auto report = trainer.step(source);
    const InputError* problem = source.input_problem();
    double notes[2] = {problem != nullptr ? 1.0 : 0.0, std::isfinite(report.loss) ? 0.0 : 1.0};
    ranks.allreduce_sum(notes, 2);
    if (notes[0] > 0) {
      if (problem != nullptr) throw EveryRankInputError(*problem);
      throw EveryRankInputError(
          InputError({}, "io.dataset", "another rank read a malformed sample (see its message)"));
    }
    if (notes[1] > 0) {
      char text[160];
      std::snprintf(text, sizeof text,
                    "training stopped at step %lld: the loss is %g (diverged: try a lower "
                    "learning rate or check the data)",
                    static_cast<long long>(step + 1), report.loss);
      measurement.diverged = text;
      return measurement;
    }
    measurement.losses.push_back(report.loss);
    measurement.step_seconds.push_back(report.step_seconds);
    measurement.timelines.push_back(report.timeline);
    measurement.memory.push_back(report.memory.samples(ranks.rank()));
    if (step < warmup) continue;
    const bool reads_like_first_epoch =
        plan.epochs_differ() && report.read_source == plan.first_epoch;
    const double step_seconds = report.step_seconds;
    (reads_like_first_epoch ? first_epoch : steady).push_back({step, std::move(report)});
    if (after_measured_step) after_measured_step(step_seconds);
  }
  if (!first_epoch.empty())
    measurement.first_epoch_step_seconds = median_step(first_epoch).report.step_seconds;
  const auto& kept = steady.empty() ? first_epoch : steady;
  std::vector<const StepReport*> kept_reports;
  for (const auto& indexed : kept) kept_reports.push_back(&indexed.report);
  auto typical = median_step(kept);
  typical.report.layer_compute = median_layer_times(kept_reports);
  measurement.typical_source = typical.report.read_source;  // where it really read
  measurement.typical = std::move(typical.report);
  measurement.typical_step = typical.step;
  return measurement;
}

std::vector<LayerComputeTime> median_layer_times(const std::vector<const StepReport*>& steps) {
  if (steps.empty()) return {};
  std::vector<LayerComputeTime> medians = steps.front()->layer_compute;
  std::vector<double> values(steps.size());
  for (std::size_t i = 0; i < medians.size(); ++i) {
    for (std::size_t step = 0; step < steps.size(); ++step) {
      values[step] = steps[step]->layer_compute.at(i).seconds;
    }
    medians[i].seconds = lower_median(values);
  }
  return medians;
}

std::string step_times(const std::vector<double>& seconds, std::int64_t warmup) {
  const auto split = static_cast<std::ptrdiff_t>(std::min<std::size_t>(
      seconds.size(), static_cast<std::size_t>(std::max<std::int64_t>(0, warmup))));
  const auto part = [](std::vector<double> values) {
    std::string text;
    char value[32];
    if (values.size() <= kListedStepTimes) {
      for (double v : values) {
        std::snprintf(value, sizeof value, " %.4g", v);
        text += value;
      }
      return text;
    }
    // Long runs: the spread, not every value (a note is one line of the results).
    std::sort(values.begin(), values.end());
    const auto at = [&](double fraction) {
      return values[static_cast<std::size_t>(fraction * static_cast<double>(values.size() - 1))];
    };
    char summary[160];
    std::snprintf(summary, sizeof summary,
                  " %zu steps: min %.4g, quartiles %.4g %.4g %.4g, max %.4g", values.size(),
                  values.front(), at(0.25), at(0.5), at(0.75), values.back());
    return std::string(summary);
  };
  return "step times" + part({seconds.begin(), seconds.begin() + split}) + " |" +
         part({seconds.begin() + split, seconds.end()}) + " s (warm-up | measured)";
}

std::string loss_summary(const std::vector<double>& losses) {
  if (losses.empty()) return "";
  char text[96];
  std::snprintf(text, sizeof text, "loss %.4g (step 1) -> %.4g (step %zu)", losses.front(),
                losses.back(), losses.size());
  return text;
}

}  // namespace tessera::kernels::real

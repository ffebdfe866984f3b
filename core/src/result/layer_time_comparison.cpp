#include "tessera/core/result/layer_time_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tessera/core/common/quantity.hpp"
#include "tessera/core/common/text_table.hpp"
#include "tessera/core/result/csv_field.hpp"

namespace tessera {
namespace {

std::string signed_percent(double part, double whole) {
  if (whole == 0) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%+.0f%%", 100.0 * part / whole);
  return text;
}

}  // namespace

std::vector<LayerTimeComparison> compare_layer_times(const std::vector<PointResult>& measured,
                                                     const std::vector<PointResult>& simulated) {
  std::vector<LayerTimeComparison> rows;
  for (const auto& real : measured) {
    const auto sim = std::find_if(simulated.begin(), simulated.end(), [&](const PointResult& each) {
      return each.point == real.point;
    });
    if (sim == simulated.end() || real.layer_compute.empty() || sim->layer_compute.empty()) {
      continue;
    }
    std::vector<bool> matched(sim->layer_compute.size(), false);
    for (const auto& time : real.layer_compute) {
      LayerTimeComparison row{real.point, time.layer, time.pass, time.seconds, 0};
      for (std::size_t i = 0; i < sim->layer_compute.size(); ++i) {
        const auto& other = sim->layer_compute[i];
        if (!matched[i] && other.layer == time.layer && other.pass == time.pass) {
          row.simulated_seconds = other.seconds;
          matched[i] = true;
          break;
        }
      }
      rows.push_back(row);
    }
    for (std::size_t i = 0; i < sim->layer_compute.size(); ++i) {
      if (matched[i]) continue;
      const auto& other = sim->layer_compute[i];
      rows.push_back({real.point, other.layer, other.pass, 0, other.seconds});
    }
  }
  return rows;
}

std::string layer_comparison_to_csv(const std::vector<LayerTimeComparison>& rows) {
  std::string csv = "point,layer,pass,measured_s,simulated_s,difference_s\n";
  for (const auto& row : rows) {
    csv += std::to_string(row.point) + "," + csv_field(row.layer) + "," + csv_field(row.pass) +
           "," + csv_number(row.measured_seconds) + "," + csv_number(row.simulated_seconds) + "," +
           csv_number(row.simulated_seconds - row.measured_seconds) + "\n";
  }
  return csv;
}

std::string layer_comparison_report(const std::vector<LayerTimeComparison>& rows,
                                    std::size_t largest) {
  std::string report;
  for (std::size_t first = 0; first < rows.size();) {
    std::size_t end = first;
    double measured = 0, simulated = 0;
    while (end < rows.size() && rows[end].point == rows[first].point) {
      measured += rows[end].measured_seconds;
      simulated += rows[end].simulated_seconds;
      ++end;
    }
    std::vector<const LayerTimeComparison*> ranked;
    for (std::size_t i = first; i < end; ++i) ranked.push_back(&rows[i]);
    std::sort(ranked.begin(), ranked.end(), [](const auto* a, const auto* b) {
      return std::abs(a->simulated_seconds - a->measured_seconds) >
             std::abs(b->simulated_seconds - b->measured_seconds);
    });
    ranked.resize(std::min(ranked.size(), largest));
    TextTable table({"layer", "pass", "measured", "simulated", "error", "share of difference"});
    const double difference = simulated - measured;
    for (const auto* row : ranked) {
      table.add_row(
          {row->layer, row->pass, format_seconds(row->measured_seconds),
           format_seconds(row->simulated_seconds),
           signed_percent(row->simulated_seconds - row->measured_seconds, row->measured_seconds),
           signed_percent(row->simulated_seconds - row->measured_seconds, std::abs(difference))});
    }
    report += "point " + std::to_string(rows[first].point) + ": compute " +
              format_seconds(measured) + " measured, " + format_seconds(simulated) +
              " simulated (" + signed_percent(difference, measured) + "); the " +
              std::to_string(ranked.size()) + " largest differences per layer and pass:\n" +
              table.render() + "\n";
    first = end;
  }
  return report;
}

}  // namespace tessera

// `tessera describe`'s vDNN table: the network-wide baseline first, then each policy with the
// feature maps' own average and how much of the baseline's it saves (the vDNN paper's figure).
#include <gtest/gtest.h>

#include <string>

#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/report/describe_report.hpp"

namespace tessera {
namespace {

// The percentage in the "maps saved" column of the row starting with `offload`.
double maps_saved_percent(const std::string& report, const std::string& offload) {
  const auto row = report.find("\n" + offload + " ");
  if (row == std::string::npos) return -1;
  const auto end = report.find('\n', row + 1);
  const std::string line = report.substr(row + 1, end - row - 1);
  const auto percent = line.find('%');
  if (percent == std::string::npos) return -1;
  const auto start = line.rfind(' ', percent) + 1;
  return std::stod(line.substr(start, percent - start));
}

TEST(DescribeOffload, SavingsAreAgainstTheNetworkWideBaseline) {
  const auto loaded = load_scenario_text(R"(
name: vdnn-describe
model: {zoo: alexnet, mini_batch: 32, optimizer: momentum}
memory: {offload: dyn}
platform: {preset: titanx_workstation}
)",
                                         "vdnn.yaml", ".");
  const auto report = describe_scenario(loaded, {.layers = false});
  ASSERT_NE(report.find("\nnone, network-wide "), std::string::npos) << report;
  const double none = maps_saved_percent(report, "none ");
  const double conv = maps_saved_percent(report, "conv");
  const double all = maps_saved_percent(report, "all");
  // Freeing maps layer by layer saves some; offloading more saves more.
  EXPECT_GT(none, 0) << report;
  EXPECT_GT(conv, none) << report;
  EXPECT_GT(all, conv) << report;
  EXPECT_LT(all, 100) << report;
}

}  // namespace
}  // namespace tessera

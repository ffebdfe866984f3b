// The SimGrid platform check: good files pass, broken ones are InputErrors naming file, line and
// element, the GPU mapping is held against the file, and a scenario's file is checked with it.
#include "tessera/simulator/platform/xml_platform_check.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tessera/core/common/input_error.hpp"
#include "tessera/core/loading/scenario_loader.hpp"

namespace tessera {
namespace {

const std::string kCheckedPlatforms = TESSERA_TEST_DATA_DIR "/platforms";
const std::string kCheckedClusters = TESSERA_TEST_DATA_DIR "/clusters";

InputError check_error(const std::string& file, const std::optional<sim::XmlGpuMapping>& mapping) {
  try {
    sim::check_xml_platform(file, mapping);
  } catch (const InputError& error) {
    return error;
  }
  ADD_FAILURE() << file << " passed the check";
  return InputError({}, "", "");
}

TEST(XmlPlatformCheck, AGoodFilePassesWithAndWithoutAMapping) {
  EXPECT_NO_THROW(sim::check_xml_platform(kCheckedPlatforms + "/four_gpus.xml", std::nullopt));
  EXPECT_NO_THROW(sim::check_xml_platform(kCheckedPlatforms + "/four_gpus.xml",
                                          sim::XmlGpuMapping{"gpu-{i}", 4}));
}

TEST(XmlPlatformCheck, AHostTheMappingNeedsIsMissing) {
  const auto error =
      check_error(kCheckedPlatforms + "/four_gpus.xml", sim::XmlGpuMapping{"gpu-{i}", 6});
  EXPECT_EQ(error.key(), "platform.simgrid_xml.gpu_hosts");
  EXPECT_NE(error.problem().find("no host 'gpu-4' for GPU 4"), std::string::npos) << error.what();
}

TEST(XmlPlatformCheck, AParseErrorNamesItsLineAndElement) {
  const auto file = kCheckedPlatforms + "/bad/unknown_unit.xml";
  const auto error = check_error(file, std::nullopt);
  EXPECT_EQ(error.where().file, file);
  EXPECT_EQ(error.where().line, 7);
  EXPECT_EQ(error.key(), "host");
  EXPECT_EQ(error.problem(), "unknown unit: Tzz");
}

// SimGrid's message quotes the value; a regex over a message of tens of kilobytes overflowed
// the stack (std::regex recurses per character).
TEST(XmlPlatformCheck, AnAttributeOfTensOfKilobytesIsAnErrorNotACrash) {
  const std::string file = testing::TempDir() + "/long_speed.xml";
  {
    std::ofstream out(file);
    out << "<?xml version='1.0'?>\n"
           "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
           "<platform version=\"4.1\">\n"
           "  <zone id=\"world\" routing=\"Full\">\n"
           "    <host id=\"gpu-0\" speed=\""
        << std::string(40000, '1') << "Tzz\"/>\n  </zone>\n</platform>\n";
  }
  const auto error = check_error(file, std::nullopt);
  EXPECT_EQ(error.where().line, 5);
  EXPECT_EQ(error.key(), "host");
  EXPECT_LT(error.problem().size(), 2100u);
}

TEST(XmlPlatformCheck, AnAbortInsideSimGridIsCaughtWithItsLine) {
  const auto error = check_error(kCheckedPlatforms + "/bad/unknown_routing.xml", std::nullopt);
  EXPECT_EQ(error.where().line, 6);
  EXPECT_EQ(error.key(), "zone");
  EXPECT_NE(error.problem().find("Not a valid model"), std::string::npos) << error.what();
}

TEST(XmlPlatformCheck, FiguresSimGridAcceptsButNoMachineHasAreErrorsAtTheirDeclaration) {
  const auto speed = check_error(kCheckedPlatforms + "/bad/negative_speed.xml", std::nullopt);
  EXPECT_EQ(speed.where().line, 9);
  EXPECT_EQ(speed.key(), "host");
  // A full-duplex link's halves (l2_UP, l2_DOWN) are found where the link is declared.
  const auto bandwidth =
      check_error(kCheckedPlatforms + "/bad/negative_bandwidth.xml", std::nullopt);
  EXPECT_EQ(bandwidth.where().line, 13);
  EXPECT_EQ(bandwidth.key(), "link");
}

TEST(XmlPlatformCheck, AMissingRouteIsFound) {
  const auto error = check_error(kCheckedPlatforms + "/bad/missing_route.xml", std::nullopt);
  EXPECT_NE(error.problem().find("no route from host 'gpu-0' to host 'gpu-2'"), std::string::npos)
      << error.what();
}

TEST(XmlPlatformCheck, AMissingFileIsAnInputError) {
  const auto error = check_error(kCheckedPlatforms + "/no_such_file.xml", std::nullopt);
  EXPECT_NE(error.problem().find("cannot be read"), std::string::npos);
}

TEST(XmlPlatformCheck, AScenarioIsCheckedWithTheGpusOfItsLargestPoint) {
  const auto scenario = [](int gpus) {
    return load_scenario_text(R"(
name: xml
model: {zoo: resnet18, mini_batch: 2}
parallelism: {data: 1}
sweep: {scaling: weak, grow: data, gpus: [1, )" +
                                  std::to_string(gpus) + R"(]}
platform:
  preset: v100_node
  simgrid_xml: {file: ../platforms/four_gpus.xml, gpu_hosts: "gpu-{i}", gpus_per_node: 4}
)",
                              "xml.yaml", kCheckedClusters);
  };
  EXPECT_NO_THROW(sim::check_scenario_platform(scenario(4)));
  try {
    sim::check_scenario_platform(scenario(8));
    FAIL() << "an 8-GPU point on a 4-host platform passed";
  } catch (const InputError& error) {
    EXPECT_NE(error.problem().find("largest sweep point has 8 GPUs"), std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace tessera

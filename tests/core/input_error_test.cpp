// What a user reads for bad input: file, line, column, key and problem, the unknown parts left
// out, and an option's key said to come from the command line.
#include "tessera/core/common/input_error.hpp"

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(InputError, NamesFileLineColumnKeyAndProblem) {
  EXPECT_EQ(format_input_error({"a.yaml", 3, 7}, "model.zoo", "expected a name"),
            "a.yaml:3:7: model.zoo: expected a name");
  EXPECT_EQ(format_input_error({"a.yaml", 3, 0}, "model.zoo", "expected a name"),
            "a.yaml:3: model.zoo: expected a name");
  EXPECT_EQ(format_input_error({"a.yaml", 0, 0}, "", "empty"), "a.yaml: empty");
}

TEST(InputError, AnOptionWithoutAFileComesFromTheCommandLine) {
  EXPECT_EQ(format_input_error({}, "--points", "expected indices"),
            "command line: --points: expected indices");
  EXPECT_EQ(format_input_error({}, "io.dataset", "no data set"),
            "<input>: io.dataset: no data set");
  // A file named for an option's value keeps its name.
  EXPECT_EQ(format_input_error({"p.csv", 2, 0}, "--profiles", "bad row"),
            "p.csv:2: --profiles: bad row");
}

}  // namespace
}  // namespace tessera

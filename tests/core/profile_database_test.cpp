// The profile database loader: what `tessera profile` writes reads back, and every rule of
// profile_database.hpp holds: non-finite, negative or absurd numbers, duplicate keys and files
// without measurements are InputErrors naming file, line, column and key.
#include <gtest/gtest.h>

#include "test_support.hpp"

#include <string>

#include "tessera/core/common/input_error.hpp"
#include "tessera/core/cost/profile_database.hpp"

namespace tessera {
namespace {

using test::contains;
using test::input_error;

const std::string kShape = "conv k3x3 s1x1 p1x1 d1x1 g1 in 16x32x32 out 16x32x32";

std::string row(const std::string& micro_batch = "4", const std::string& algorithm = "GEMM",
                const std::string& time = "0.0002", const std::string& workspace = "4096",
                const std::string& ok = "true") {
  return "gpu,conv,forward," + kShape + ",float32," + micro_batch + "," + algorithm + "," + time +
         "," + workspace + "," + ok + "\n";
}

// Line 1 the format, 2 the header, rows from line 3.
std::string file(const std::string& rows) {
  return "# tessera-profile/1\n" + std::string(kProfileHeader) + "\n" + rows;
}

ProfileDatabase load(const std::string& text, const std::string& name = "p.csv") {
  ProfileDatabase profiles;
  profiles.load_csv_text(text, name);
  return profiles;
}

TEST(ProfileDatabase, ReadsRowsAndMetadata) {
  const auto profiles = load("# tessera-profile/1\n# device: gpu\n# libraries: cuDNN 9\n" +
                             std::string(kProfileHeader) + "\n" + row("4", "GEMM") +
                             row("4", "FFT", "0", "1e9", "false"));
  EXPECT_EQ(profiles.size(), 2u);
  ASSERT_EQ(profiles.sources().size(), 1u);
  EXPECT_EQ(profiles.sources()[0].device, "gpu");
  EXPECT_EQ(profiles.sources()[0].libraries, "cuDNN 9");
  const auto best =
      profiles.best("gpu", "conv", Direction::forward, kShape, DType::float32, 4, 1e12);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->algorithm, "GEMM");
  EXPECT_DOUBLE_EQ(best->time_seconds, 0.0002);
  EXPECT_EQ(best->where.file, "p.csv");
  EXPECT_EQ(best->where.line, 5);  // after three comments and the header
}

TEST(ProfileDatabase, WhatItWritesReadsBack) {
  const auto profiles =
      load(file(row("1") + row("2") + row("4", "FFT", "0", "1073741824", "false")));
  const auto again = load(profiles.to_csv({"gpu", "none", "2026-01-01T00:00:00Z"}));
  EXPECT_EQ(again.size(), 3u);
  EXPECT_EQ(again.sources()[0].created_utc, "2026-01-01T00:00:00Z");
}

TEST(ProfileDatabase, SaysHowItsMicroBatchesWereTimed) {
  const auto unstated = load(file(row()));  // written before the line existed: alone
  EXPECT_EQ(unstated.sources()[0].micro_batch_timing, MicroBatchTiming::alone);
  const auto written =
      unstated.to_csv({"gpu", "none", "2026-01-01T00:00:00Z", MicroBatchTiming::in_context});
  EXPECT_TRUE(contains(written, "\n# micro_batch_timing: in_context\n")) << written;
  EXPECT_EQ(load(written).sources()[0].micro_batch_timing, MicroBatchTiming::in_context);
  const auto alone = unstated.to_csv({"gpu", "none", "2026-01-01T00:00:00Z"});
  EXPECT_EQ(load(alone).sources()[0].micro_batch_timing, MicroBatchTiming::alone);
  const auto bad = input_error([] {
    load("# tessera-profile/1\n# micro_batch_timing: warm\n" + std::string(kProfileHeader) + "\n" +
         row());
  });
  EXPECT_EQ(bad.key(), "micro_batch_timing");
  EXPECT_EQ(bad.where().line, 2);
  EXPECT_TRUE(contains(bad.problem(), "expected alone or in_context, got 'warm'")) << bad.what();
}

TEST(ProfileDatabase, SaysWhatItsRunsFoundInTheCaches) {
  const auto unstated = load(file(row()));  // written before the line existed
  EXPECT_EQ(unstated.sources()[0].caches, RunCaches::unrecorded);
  const auto silent = unstated.to_csv({"gpu", "none", "2026-01-01T00:00:00Z"});
  EXPECT_FALSE(contains(silent, "# caches")) << silent;  // an unknown state is not claimed
  for (const RunCaches caches : {RunCaches::warm, RunCaches::flushed, RunCaches::step_like}) {
    const auto written =
        unstated.to_csv({"gpu", "none", "2026-01-01T00:00:00Z", MicroBatchTiming::alone, caches});
    EXPECT_TRUE(contains(written, "\n# caches: " + to_string(caches) + "\n")) << written;
    EXPECT_EQ(load(written).sources()[0].caches, caches);
  }
  const auto bad = input_error([] {
    load("# tessera-profile/1\n# caches: cold\n" + std::string(kProfileHeader) + "\n" + row());
  });
  EXPECT_EQ(bad.key(), "caches");
  EXPECT_EQ(bad.where().line, 2);
  EXPECT_TRUE(contains(bad.problem(), "expected warm, flushed or step_like, got 'cold'"))
      << bad.what();
}

TEST(ProfileDatabase, CrLfLinesAndBlankLinesAreFine) {
  EXPECT_EQ(load("\r\n" + std::string(kProfileHeader) + "\r\n\r\n" +
                 "gpu,relu,forward,relu in 4 out "
                 "4,float32,1,default,1e-06,0,true\r\n")
                .size(),
            1u);
}

struct BadNumber {
  std::string column;
  std::string micro_batch = "4";
  std::string time = "0.0002";
  std::string workspace = "4096";
  std::string shown;  // as the error quotes it
};

class ProfileDatabaseBadNumber : public testing::TestWithParam<BadNumber> {};

TEST_P(ProfileDatabaseBadNumber, NamesLineColumnAndKey) {
  const auto& bad = GetParam();
  const auto text = file(row() + row(bad.micro_batch, "FFT", bad.time, bad.workspace));
  const auto error = input_error([&] { load(text); });
  EXPECT_EQ(error.where().file, "p.csv");
  EXPECT_EQ(error.where().line, 4);
  EXPECT_EQ(error.key(), bad.column);
  const auto& line = row(bad.micro_batch, "FFT", bad.time, bad.workspace);
  const auto value = bad.column == "micro_batch" ? bad.micro_batch
                     : bad.column == "time_s"    ? bad.time
                                                 : bad.workspace;
  EXPECT_EQ(error.where().column, static_cast<int>(line.find("," + value + ",")) + 2);
  EXPECT_TRUE(contains(error.problem(), "got " + bad.shown)) << error.what();
}

INSTANTIATE_TEST_SUITE_P(
    EveryNumericColumn, ProfileDatabaseBadNumber,
    testing::Values(
        BadNumber{.column = "time_s", .time = "nan", .shown = "'nan'"},
        BadNumber{.column = "time_s", .time = "inf", .shown = "'inf'"},
        BadNumber{.column = "time_s", .time = "-inf", .shown = "'-inf'"},
        BadNumber{.column = "time_s", .time = "1e300", .shown = "'1e300'"},
        BadNumber{.column = "time_s", .time = "1000001", .shown = "'1000001'"},
        BadNumber{.column = "time_s", .time = "-1e-06", .shown = "'-1e-06'"},
        BadNumber{.column = "time_s", .time = "1 ms", .shown = "'1 ms'"},
        BadNumber{.column = "time_s", .time = "", .shown = "nothing"},
        BadNumber{.column = "workspace_bytes", .workspace = "nan", .shown = "'nan'"},
        BadNumber{.column = "workspace_bytes", .workspace = "inf", .shown = "'inf'"},
        BadNumber{.column = "workspace_bytes", .workspace = "-1", .shown = "'-1'"},
        BadNumber{.column = "workspace_bytes", .workspace = "0.5", .shown = "'0.5'"},
        BadNumber{.column = "workspace_bytes", .workspace = "1e300", .shown = "'1e300'"},
        BadNumber{.column = "micro_batch", .micro_batch = "0", .shown = "'0'"},
        BadNumber{.column = "micro_batch", .micro_batch = "nan", .shown = "'nan'"},
        BadNumber{.column = "micro_batch", .micro_batch = "1.5", .shown = "'1.5'"},
        BadNumber{.column = "micro_batch", .micro_batch = "16777217", .shown = "'16777217'"}));

TEST(ProfileDatabase, LimitsThemselvesAreAccepted) {
  const auto profiles =
      load(file(row("16777216", "A", "1000000", "9007199254740992") + row("1", "B", "0", "0")));
  EXPECT_EQ(profiles.size(), 2u);
}

TEST(ProfileDatabaseErrors, TextColumnsMustNotBeEmpty) {
  const auto error = input_error([] { load(file(row("4", ""))); });
  EXPECT_EQ(error.key(), "algorithm");
  const auto device =
      input_error([] { load(file(",relu,forward,relu in 4 out 4,float32,1,default,0,0,true\n")); });
  EXPECT_EQ(device.key(), "device");
  EXPECT_EQ(device.where().column, 1);
}

TEST(ProfileDatabaseErrors, ChoicesNameWhatIsAllowed) {
  const auto direction =
      input_error([] { load(file("gpu,relu,backward,s,float32,1,a,0,0,true\n")); });
  EXPECT_EQ(direction.key(), "direction");
  EXPECT_TRUE(contains(direction.problem(), "forward, backward_data or backward_filter"));
  const auto dtype = input_error([] { load(file("gpu,relu,forward,s,float64,1,a,0,0,true\n")); });
  EXPECT_EQ(dtype.key(), "dtype");
  EXPECT_TRUE(contains(dtype.problem(), "got 'float64'")) << dtype.what();
  const auto ok = input_error([] { load(file(row("4", "GEMM", "0.1", "0", "1"))); });
  EXPECT_EQ(ok.key(), "ok");
}

TEST(ProfileDatabaseErrors, FieldCountCountsATrailingEmptyField) {
  auto line = row();
  line.insert(line.size() - 1, ",");
  const auto error = input_error([&] { load(file(line)); });
  EXPECT_TRUE(contains(error.problem(), "got 11")) << error.what();
}

TEST(ProfileDatabaseErrors, DuplicateKeyNamesBothLines) {
  const auto error = input_error(
      [] { load(file(row("4", "GEMM") + row("2", "GEMM") + row("4", "GEMM", "0.3"))); });
  EXPECT_EQ(error.where().line, 5);
  EXPECT_EQ(error.key(), "row");
  EXPECT_TRUE(contains(error.problem(), "repeats line 3")) << error.what();
}

TEST(ProfileDatabaseErrors, AFileWithoutMeasurementsIsAnError) {
  const auto header_only = input_error([] { load(file("")); });
  EXPECT_EQ(header_only.where().line, 2);
  EXPECT_TRUE(contains(header_only.problem(), "no measurements")) << header_only.what();
  const auto empty = input_error([] { load(""); });
  EXPECT_EQ(empty.where().line, 1);
  EXPECT_TRUE(contains(empty.problem(), "no measurements")) << empty.what();
  const auto comments = input_error([] { load("# tessera-profile/1\n# device: gpu\n"); });
  EXPECT_TRUE(contains(comments.problem(), "no measurements")) << comments.what();
}

TEST(ProfileDatabaseErrors, HeaderAndFormatAreExact) {
  const auto header = input_error([] { load("device,op\n" + row()); });
  EXPECT_EQ(header.key(), "header");
  const auto format = input_error(
      [] { load("# tessera-profile/2\n" + std::string(kProfileHeader) + "\n" + row()); });
  EXPECT_EQ(format.key(), "format");
  EXPECT_EQ(format.where().line, 1);
}

TEST(ProfileDatabaseErrors, ControlBytesAreNotEchoed) {
  const auto error = input_error([] { load(file(row("4", "GEMM", std::string("1\x1b[2J", 5)))); });
  EXPECT_TRUE(contains(error.problem(), "0x1B")) << error.what();
  EXPECT_FALSE(contains(error.what(), "\x1b")) << error.what();
}

TEST(ProfileDatabaseErrors, AMalformedFileAddsNothing) {
  ProfileDatabase profiles;
  profiles.load_csv_text(file(row("1")), "a.csv");
  EXPECT_THROW(profiles.load_csv_text(file(row("2") + row("4", "GEMM", "nan")), "b.csv"),
               InputError);
  EXPECT_EQ(profiles.size(), 1u);
  EXPECT_EQ(profiles.sources().size(), 1u);
}

TEST(ProfileDatabaseErrors, MissingFileAndDirectory) {
  const auto missing = input_error([] { ProfileDatabase().load_csv("/no/such/profile.csv"); });
  EXPECT_EQ(missing.where().file, "/no/such/profile.csv");
  const auto directory = input_error([] { ProfileDatabase().load_csv(TESSERA_TEST_DATA_DIR); });
  EXPECT_TRUE(contains(directory.problem(), "is a directory")) << directory.what();
}

TEST(ProfileDatabase, ALaterFileReplacesAnEarlierOnesRowForTheSameKey) {
  ProfileDatabase profiles;
  profiles.load_csv_text(file(row("4", "GEMM", "0.0002") + row("2")), "a.csv");
  profiles.load_csv_text(file(row("4", "GEMM", "0.0005")), "b.csv");
  EXPECT_EQ(profiles.size(), 2u);
  EXPECT_EQ(profiles.replaced_rows(), 1u);
  const auto rows = profiles.entries_for("gpu", "conv", Direction::forward, kShape, DType::float32);
  ASSERT_EQ(rows.size(), 2u);
  const auto best =
      profiles.best("gpu", "conv", Direction::forward, kShape, DType::float32, 4, 1e9);
  ASSERT_TRUE(best);
  EXPECT_DOUBLE_EQ(best->time_seconds, 0.0005);
  EXPECT_EQ(best->where.file, "b.csv");
}

TEST(ProfileDatabase, MergingADatabaseIsLoadingItsFilesAfterThisOnes) {
  // validate-sim's rows timed between the steps replace the profile's before it.
  ProfileDatabase loaded;
  loaded.load_csv_text(file(row("4", "GEMM", "0.0002") + row("2")), "a.csv");
  loaded.load_csv_text(file(row("4", "GEMM", "0.0005") + row("8")), "b.csv");
  ProfileDatabase merged;
  merged.load_csv_text(file(row("4", "GEMM", "0.0002") + row("2")), "a.csv");
  ProfileDatabase later;
  later.load_csv_text(file(row("4", "GEMM", "0.0005") + row("8")), "b.csv");
  merged.merge(later);
  EXPECT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged.replaced_rows(), loaded.replaced_rows());
  EXPECT_EQ(merged.to_csv({}), loaded.to_csv({}));
  ASSERT_EQ(merged.sources().size(), 2u);
  const auto best = merged.best("gpu", "conv", Direction::forward, kShape, DType::float32, 4, 1e9);
  ASSERT_TRUE(best);
  EXPECT_DOUBLE_EQ(best->time_seconds, 0.0005);
  EXPECT_EQ(best->where.file, "b.csv");
}

TEST(ProfileDatabase, AddingAMeasuredKeyAgainReplacesIt) {
  // A resumed `tessera profile` under mpirun measures the collectives again: one row each.
  ProfileDatabase profiles;
  const ProfileEntry first{.device = "gpu",
                           .op = "allreduce",
                           .shape = "bytes 4000 ranks 2",
                           .algorithm = "default",
                           .time_seconds = 1e-5};
  profiles.add(first);
  auto again = first;
  again.time_seconds = 2e-5;
  profiles.add(again);
  EXPECT_EQ(profiles.size(), 1u);
  EXPECT_EQ(profiles.rows().at(0).time_seconds, 2e-5);
  EXPECT_EQ(load(profiles.to_csv({})).size(), 1u);
}

TEST(ProfileDatabase, TransferOpsAreCopiesAndCollectives) {
  EXPECT_TRUE(is_transfer_op("copy_h2d_pinned"));
  EXPECT_TRUE(is_transfer_op("allreduce"));
  EXPECT_TRUE(is_transfer_op("sendrecv"));
  EXPECT_FALSE(is_transfer_op("conv"));
  EXPECT_FALSE(is_transfer_op("update_adam"));
}

}  // namespace
}  // namespace tessera

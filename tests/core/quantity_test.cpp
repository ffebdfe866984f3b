// Parsing and formatting of physical quantities ("16 GiB", "900 GB/s", "15.7 TFLOP/s", "2 us").
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>

#include "tessera/core/common/quantity.hpp"

namespace tessera {
namespace {

std::optional<double> bytes(const std::string& text) {
  return parse_quantity(text, QuantityKind::bytes);
}
std::optional<double> bandwidth(const std::string& text) {
  return parse_quantity(text, QuantityKind::bandwidth_bytes_per_second);
}
std::optional<double> flops(const std::string& text) {
  return parse_quantity(text, QuantityKind::flops_per_second);
}
std::optional<double> seconds(const std::string& text) {
  return parse_quantity(text, QuantityKind::seconds);
}

// ---------------------------------------------------------------------------------------------
// Bytes

TEST(ParseQuantityBytes, BinaryPrefixes) {
  ASSERT_TRUE(bytes("16 GiB").has_value());
  EXPECT_EQ(*bytes("16 GiB"), 17179869184.0);
  EXPECT_EQ(*bytes("512 MiB"), 536870912.0);
  EXPECT_EQ(*bytes("4 KiB"), 4096.0);
  EXPECT_EQ(*bytes("2 TiB"), 2.0 * 1024 * 1024 * 1024 * 1024);
  EXPECT_EQ(*bytes("1.5 GiB"), 1610612736.0);
  EXPECT_EQ(*bytes("1 PiB"), 1024.0 * 1024 * 1024 * 1024 * 1024);
  EXPECT_EQ(*bytes("1 EiB"), 1024.0 * 1024 * 1024 * 1024 * 1024 * 1024);
}

TEST(ParseQuantityBytes, DecimalPrefixes) {
  ASSERT_TRUE(bytes("16 GB").has_value());
  EXPECT_EQ(*bytes("16 GB"), 16e9);
  EXPECT_EQ(*bytes("3 MB"), 3e6);
  EXPECT_EQ(*bytes("2 kB"), 2000.0);
  EXPECT_EQ(*bytes("2 KB"), 2000.0);
  EXPECT_EQ(*bytes("1 TB"), 1e12);
  EXPECT_EQ(*bytes("7 B"), 7.0);
  EXPECT_EQ(*bytes("2 PB"), 2e15);
  EXPECT_EQ(*bytes("1 EB"), 1e18);
}

TEST(ParseQuantityBytes, PlainNumberIsBytes) {
  ASSERT_TRUE(bytes("1e9").has_value());
  EXPECT_EQ(*bytes("1e9"), 1e9);
  EXPECT_EQ(*bytes("4096"), 4096.0);
  EXPECT_EQ(*bytes("0"), 0.0);
}

TEST(ParseQuantityBytes, SpacingIsFlexible) {
  EXPECT_EQ(bytes("16GiB"), std::optional<double>(17179869184.0));
  EXPECT_EQ(bytes("  16 GiB  "), std::optional<double>(17179869184.0));
  EXPECT_EQ(bytes("\t512\tMiB"), std::optional<double>(536870912.0));
}

TEST(ParseQuantityBytes, RejectsMalformedOrNegative) {
  EXPECT_FALSE(bytes("-1").has_value());
  EXPECT_FALSE(bytes("-1 GiB").has_value());
  EXPECT_FALSE(bytes("64 MiBs").has_value());
  EXPECT_FALSE(bytes("GiB").has_value());
  EXPECT_FALSE(bytes("1.5.2").has_value());
  EXPECT_FALSE(bytes("").has_value());
  EXPECT_FALSE(bytes("   ").has_value());
  EXPECT_FALSE(bytes("16 gib").has_value());
  EXPECT_FALSE(bytes("16 Gi").has_value());
  EXPECT_FALSE(bytes("16 GiB/s").has_value());  // a bandwidth, not a size
  EXPECT_FALSE(bytes("16 Gb").has_value());     // bits are only for bandwidths
  EXPECT_FALSE(bytes("16 XB").has_value());
  EXPECT_FALSE(bytes("inf").has_value());
  EXPECT_FALSE(bytes("nan").has_value());
  EXPECT_FALSE(bytes("1e400").has_value());
  EXPECT_FALSE(bytes("1e300 TiB").has_value());  // overflows to infinity
  EXPECT_FALSE(bytes("16 GiB extra").has_value());
}

// ---------------------------------------------------------------------------------------------
// Bandwidth

TEST(ParseQuantityBandwidth, BytesAndBitsPerSecond) {
  ASSERT_TRUE(bandwidth("900 GB/s").has_value());
  EXPECT_EQ(*bandwidth("900 GB/s"), 900e9);
  ASSERT_TRUE(bandwidth("100 Gb/s").has_value());
  EXPECT_EQ(*bandwidth("100 Gb/s"), 12.5e9);
  EXPECT_EQ(*bandwidth("25e9"), 25e9);
  EXPECT_EQ(*bandwidth("8 b/s"), 1.0);
  EXPECT_EQ(*bandwidth("1 GiB/s"), 1024.0 * 1024 * 1024);
  EXPECT_EQ(*bandwidth("200 Gbps"), 25e9);
  EXPECT_EQ(*bandwidth("3 B/s"), 3.0);
}

TEST(ParseQuantityBandwidth, RejectsOtherUnits) {
  EXPECT_FALSE(bandwidth("900 GB").has_value());
  EXPECT_FALSE(bandwidth("900 GB/ms").has_value());
  EXPECT_FALSE(bandwidth("-5 GB/s").has_value());
  EXPECT_FALSE(bandwidth("GB/s").has_value());
  EXPECT_FALSE(bandwidth("2 TFLOP/s").has_value());
}

// ---------------------------------------------------------------------------------------------
// Compute rate

TEST(ParseQuantityFlops, PrefixedRates) {
  ASSERT_TRUE(flops("15.7 TFLOP/s").has_value());
  EXPECT_DOUBLE_EQ(*flops("15.7 TFLOP/s"), 15.7e12);
  EXPECT_DOUBLE_EQ(*flops("312 TFLOPS"), 312e12);
  EXPECT_DOUBLE_EQ(*flops("19.5 GFLOP/s"), 19.5e9);
  EXPECT_EQ(*flops("1e12"), 1e12);
  EXPECT_EQ(*flops("5 FLOP/s"), 5.0);
}

TEST(ParseQuantityFlops, RejectsOtherUnits) {
  EXPECT_FALSE(flops("15.7 TB/s").has_value());
  EXPECT_FALSE(flops("15.7 T").has_value());
  EXPECT_FALSE(flops("15.7 TFLOP").has_value());
  EXPECT_FALSE(flops("-1 TFLOP/s").has_value());
}

// ---------------------------------------------------------------------------------------------
// Durations

TEST(ParseQuantitySeconds, Units) {
  ASSERT_TRUE(seconds("2 us").has_value());
  EXPECT_DOUBLE_EQ(*seconds("2 us"), 2e-6);
  ASSERT_TRUE(seconds("1.5 ms").has_value());
  EXPECT_DOUBLE_EQ(*seconds("1.5 ms"), 1.5e-3);
  EXPECT_DOUBLE_EQ(*seconds("40 ns"), 40e-9);
  EXPECT_EQ(*seconds("3 s"), 3.0);
  EXPECT_EQ(*seconds("0.01"), 0.01);
}

TEST(ParseQuantitySeconds, RejectsPrefixedSecondsAndForeignUnits) {
  EXPECT_FALSE(seconds("5 Gs").has_value());
  EXPECT_FALSE(seconds("5 ks").has_value());
  EXPECT_FALSE(seconds("5 Ms").has_value());
  EXPECT_FALSE(seconds("5 GB").has_value());
  EXPECT_FALSE(seconds("5 sec").has_value());
  EXPECT_FALSE(seconds("-2 us").has_value());
}

TEST(QuantitySyntax, DescribesEveryKind) {
  EXPECT_NE(quantity_syntax(QuantityKind::bytes).find("GiB"), std::string::npos);
  EXPECT_NE(quantity_syntax(QuantityKind::bandwidth_bytes_per_second).find("GB/s"),
            std::string::npos);
  EXPECT_NE(quantity_syntax(QuantityKind::flops_per_second).find("TFLOP/s"), std::string::npos);
  EXPECT_NE(quantity_syntax(QuantityKind::seconds).find("ms"), std::string::npos);
}

// The examples given in the syntax descriptions must themselves parse.
TEST(QuantitySyntax, ExamplesParse) {
  EXPECT_TRUE(bytes("512 MiB") && bytes("16 GiB") && bytes("1e9"));
  EXPECT_TRUE(bandwidth("900 GB/s") && bandwidth("100 Gb/s") && bandwidth("25e9"));
  EXPECT_TRUE(flops("15.7 TFLOP/s") && flops("1e12"));
  EXPECT_TRUE(seconds("2 us") && seconds("1.5 ms") && seconds("0.01"));
}

// ---------------------------------------------------------------------------------------------
// Formatting

TEST(FormatBytes, PicksTheLargestBinaryUnit) {
  EXPECT_EQ(format_bytes(0), "0.00 B");
  EXPECT_EQ(format_bytes(512), "512.00 B");
  EXPECT_EQ(format_bytes(1023), "1023.00 B");
  EXPECT_EQ(format_bytes(1024), "1.00 KiB");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(536870912.0), "512.00 MiB");
  EXPECT_EQ(format_bytes(1610612736.0), "1.50 GiB");
  EXPECT_EQ(format_bytes(17179869184.0), "16.00 GiB");
  EXPECT_EQ(format_bytes(2.0 * 1024 * 1024 * 1024 * 1024), "2.00 TiB");
}

TEST(FormatBytes, ReadsBackThroughParseQuantity) {
  for (double value : {1024.0, 536870912.0, 17179869184.0}) {
    EXPECT_EQ(bytes(format_bytes(value)), std::optional<double>(value)) << format_bytes(value);
  }
}

TEST(FormatFlops, PicksTheLargestDecimalUnit) {
  EXPECT_EQ(format_flops(3.2e9), "3.20 GFLOP");
  EXPECT_EQ(format_flops(999), "999.00 FLOP");
  EXPECT_EQ(format_flops(1.5e12), "1.50 TFLOP");
}

TEST(FormatSeconds, PicksAUnitByMagnitude) {
  EXPECT_EQ(format_seconds(2.5), "2.500 s");
  EXPECT_EQ(format_seconds(0.0123), "12.300 ms");
  EXPECT_EQ(format_seconds(2e-6), "2.000 us");
  EXPECT_EQ(format_seconds(0), "0.000 s");
}

TEST(FormatCount, GroupsThousands) {
  EXPECT_EQ(format_count(0), "0");
  EXPECT_EQ(format_count(7), "7");
  EXPECT_EQ(format_count(999), "999");
  EXPECT_EQ(format_count(1000), "1,000");
  EXPECT_EQ(format_count(65536), "65,536");
  EXPECT_EQ(format_count(100000), "100,000");
  EXPECT_EQ(format_count(9437636), "9,437,636");
  EXPECT_EQ(format_count(61100840), "61,100,840");
  EXPECT_EQ(format_count(-1234567), "-1,234,567");
  EXPECT_EQ(format_count(-999), "-999");
  EXPECT_EQ(format_count(INT64_MAX), "9,223,372,036,854,775,807");
  // format_count(INT64_MIN) is left out: see the report (negating INT64_MIN overflows).
}

}  // namespace
}  // namespace tessera

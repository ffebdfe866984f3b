// Host-only part of the CUDA backend's graph-API path: how an engine configuration is named and
// rebuilt from its name, which engines are offered, and what alignment operands promise.
// Runs everywhere, GPU or not.
#include "cudnn_engine_names.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace tessera::kernels {
namespace {

std::string message_of(const std::string& name) {
  try {
    parse_cudnn_engine_name(name);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "(no exception)";
}

TEST(CudnnEngineNames, KnobsAreNamedInAscendingTypeAndTheNameRoundTrips) {
  const CudnnEngineConfig config{.engine = 12, .knobs = {{7, -1}, {3, 1}}};
  const std::string name = cudnn_engine_name(config);
  EXPECT_EQ(name, "ENGINE_12_K3=1_K7=-1");
  EXPECT_TRUE(is_cudnn_engine_name(name));
  const CudnnEngineConfig read = parse_cudnn_engine_name(name);
  EXPECT_EQ(read.engine, 12);
  ASSERT_EQ(read.knobs.size(), 2u);
  EXPECT_EQ(read.knobs[0], (CudnnKnobChoice{3, 1}));
  EXPECT_EQ(read.knobs[1], (CudnnKnobChoice{7, -1}));
  EXPECT_EQ(cudnn_engine_name(read), name);
}

TEST(CudnnEngineNames, AnEngineWithoutKnobsIsItsIndex) {
  EXPECT_EQ(cudnn_engine_name({.engine = 0}), "ENGINE_0");
  EXPECT_EQ(parse_cudnn_engine_name("ENGINE_0"), (CudnnEngineConfig{.engine = 0}));
}

TEST(CudnnEngineNames, LegacyAlgorithmNamesAreNotEngines) {
  for (const char* legacy : {"IMPLICIT_PRECOMP_GEMM", "ALGO_1", "FFT_TILING", "engine_3"}) {
    EXPECT_FALSE(is_cudnn_engine_name(legacy)) << legacy;
  }
}

TEST(CudnnEngineNames, MalformedNamesSayWhatWasExpected) {
  EXPECT_EQ(message_of("ALGO_0"), "cuDNN engine name 'ALGO_0': expected it to start with ENGINE_");
  EXPECT_EQ(message_of("ENGINE_"),
            "cuDNN engine name 'ENGINE_': expected the engine index as a whole number, got ''");
  EXPECT_EQ(message_of("ENGINE_4x"),
            "cuDNN engine name 'ENGINE_4x': expected the engine index as a whole number, got '4x'");
  EXPECT_EQ(message_of("ENGINE_4_K3"),
            "cuDNN engine name 'ENGINE_4_K3': expected each knob as K<type>=<value>, got 'K3'");
  EXPECT_EQ(message_of("ENGINE_4_K3=one"),
            "cuDNN engine name 'ENGINE_4_K3=one': expected a knob value as a whole number, got "
            "'one'");
}

TEST(CudnnEngineNames, OnlyFloat32EnginesBuiltWithoutCompilingAreOffered) {
  EXPECT_TRUE(offers_engine({}));
  EXPECT_TRUE(offers_engine({.nondeterministic = true}));
  EXPECT_FALSE(offers_engine({.tensor_core = true}));
  EXPECT_FALSE(offers_engine({.down_converts_inputs = true}));
  EXPECT_FALSE(offers_engine({.reduced_precision_reduction = true}));
  EXPECT_FALSE(offers_engine({.runtime_compiled = true}));
}

TEST(CudnnEngineNames, OperandsPromiseTheLargestPowerOfTwoUpToSixteenBytes) {
  EXPECT_EQ(cudnn_operand_alignment(0x1000), 16);
  EXPECT_EQ(cudnn_operand_alignment(0x1008), 8);
  EXPECT_EQ(cudnn_operand_alignment(0x1004), 4);
  EXPECT_EQ(cudnn_operand_alignment(0x1002), 2);
  // Micro-batches of samples of 3 x 227 x 227 floats start 4-byte aligned; of 4 x 128^3, 16.
  EXPECT_EQ(cudnn_micro_batch_alignment(3 * 227 * 227), 4);
  EXPECT_EQ(cudnn_micro_batch_alignment(2), 8);
  EXPECT_EQ(cudnn_micro_batch_alignment(4 * 128 * 128 * 128), 16);
}

}  // namespace
}  // namespace tessera::kernels

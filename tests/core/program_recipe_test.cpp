// The one recipe of a point's step programs (program_recipe.hpp): what the memory plan decides,
// what the programs carry, and that a variant's fields reach them.
#include "tessera/core/point/program_recipe.hpp"

#include <gtest/gtest.h>

#include "tessera/core/point/point_programs.hpp"
#include "tessera/core/strategy/memory_estimate.hpp"

namespace tessera {
namespace {

LoadedScenario vgg16_on_a_small_gpu(const std::string& offload) {
  return load_scenario_text(R"(
name: recipe
model: {zoo: vgg16, mini_batch: 256}
memory: {offload: )" + offload + R"(, device_capacity: 12 GiB}
kernels: {micro_batching: {workspace_limit: 32 MiB}}
platform: {preset: titanx_workstation}
)",
                            "recipe.yaml", "");
}

TEST(ProgramRecipe, APointsRecipeIsTheMemoryPlansDecision) {
  const auto loaded = vgg16_on_a_small_gpu("dyn");
  const auto& point = loaded.points.front();
  const auto recipe = point_recipe(loaded, point, Epoch::later);
  const auto decided = decide_offload(
      loaded.model, point.plan, memory_inputs_of(loaded.scenario, loaded.device_capacity_bytes));
  EXPECT_EQ(recipe.offload.policy, decided.policy);
  EXPECT_NE(recipe.offload.policy, OffloadPolicy::none);  // VGG-16 at 256 does not fit 12 GiB as is
  EXPECT_EQ(recipe.scenario, &loaded.scenario);
  EXPECT_EQ(recipe.overlaps_communication, loaded.cluster.gpu.overlaps_communication);
  // point_programs is this recipe's build.
  const auto programs = point_programs(loaded, point, nullptr);
  EXPECT_EQ(programs.offload.policy, recipe.offload.policy);
  EXPECT_EQ(programs.programs.front().ops.size(),
            recipe.build(loaded.model, point.plan, roofline_of(loaded.cluster.gpu), nullptr)
                .front()
                .ops.size());
}

TEST(ProgramRecipe, ProgramsCarryTheWorkspaceTheirConvolutionsRunWithin) {
  const auto loaded = vgg16_on_a_small_gpu("none");
  const auto& point = loaded.points.front();
  ProgramRecipe recipe = point_recipe(loaded, point, Epoch::later);
  const auto roofline = roofline_of(loaded.cluster.gpu);
  const auto programs = recipe.build(loaded.model, point.plan, roofline, nullptr);
  ASSERT_TRUE(programs.front().workspace_limit_bytes.has_value());
  EXPECT_DOUBLE_EQ(*programs.front().workspace_limit_bytes, 32.0 * 1024 * 1024);
  // dyn's last resort, the memory-optimal algorithms, leaves no workspace.
  recipe.offload = {.policy = OffloadPolicy::all, .memory_optimal_algorithms = true};
  const auto last_resort = recipe.build(loaded.model, point.plan, roofline, nullptr);
  EXPECT_DOUBLE_EQ(last_resort.front().workspace_limit_bytes.value_or(-1), 0.0);
  EXPECT_EQ(recipe.step_options().offload.policy, OffloadPolicy::all);
}

}  // namespace
}  // namespace tessera

// A step whose programs cannot end (a GPU waits for a message no other GPU sends) is an error,
// not a step time: SimGrid ends such a run once every actor waits, and the player says which GPU
// was left waiting.
#include <gtest/gtest.h>

#include <simgrid/s4u/Engine.hpp>

#include "child_process_support.hpp"
#include "play/step_player.hpp"
#include "process/child_process.hpp"
#include "tessera/core/scenario/cluster_spec.hpp"
#include "tessera/core/strategy/rank_numbering.hpp"
#include "tessera/simulator/fabric.hpp"
#include "tessera/simulator/platform/platform.hpp"

namespace tessera::sim {
namespace {

StepOp stage_message(StepOpKind kind, int peer) {
  return {.kind = kind,
          .category = OpCategory::other_communication,
          .label = to_string(kind),
          .layer = 1,
          .bytes = 1e6,
          .peer_stage = peer};
}

StepOp compute() {
  return {.kind = StepOpKind::compute, .label = "compute", .layer = 1, .seconds = 1e-3};
}

// Two stages of one replica playing `first` and `second` in a fresh process (one SimGrid engine
// per process): check_finished's message, or "" when both ended.
std::string play_two_stages(std::vector<StepOp> first, std::vector<StepOp> second) {
  const auto child = run_in_child(
      [&] {
        auto& engine = test::cm02_engine();
        const auto cluster = load_cluster_file(
            std::string(TESSERA_TEST_DATA_DIR "/clusters/host_copies_two_gpus.yaml"));
        const auto platform = build_cluster_platform(engine, cluster, 2);
        const Fabric fabric(platform.gpu_hosts);
        ParallelConfig config;
        config.model_degree = 2;
        const RankNumbering layout(config);
        StepProgram stage0;
        stage0.ops = std::move(first);
        StepProgram stage1;
        stage1.stage = 1;
        stage1.ops = std::move(second);
        const std::vector<std::vector<StepProgram>> programs{{stage0, stage1}};
        StepPlayer player(platform, fabric, layout, programs, {});
        player.spawn();
        engine.run();
        try {
          player.check_finished();
        } catch (const std::exception& error) {
          return nlohmann::json{{"error", error.what()}};
        }
        return nlohmann::json{{"error", ""}};
      },
      false);
  EXPECT_TRUE(child.message.has_value()) << child.captured_stderr;
  return child.message ? child.message->value("error", "no message") : "no message";
}

TEST(StepPlayerDeadlock, MatchedMessagesEnd) {
  EXPECT_EQ(play_two_stages({compute(), stage_message(StepOpKind::stage_send, 1)},
                            {stage_message(StepOpKind::stage_recv, 0), compute()}),
            "");
}

TEST(StepPlayerDeadlock, AReceiveNoOneSendsIsAnError) {
  const auto error =
      play_two_stages({compute(), stage_message(StepOpKind::stage_recv, 1)}, {compute()});
  EXPECT_NE(error.find("deadlocked: GPU 0 waits for a message"), std::string::npos) << error;
}

}  // namespace
}  // namespace tessera::sim

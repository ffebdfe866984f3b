#pragma once
// A kernel of the profile plan run again and again, at its whole batch with the fastest algorithm
// a profile holds for it: the load a rank keeps up while other ranks still measure theirs
// (`tessera profile` under mpirun), so that what they time shares the machine as in training,
// where every rank of a pipeline computes its own stage's kernels at the same time.
#include <functional>
#include <memory>

#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/point/profile_plan.hpp"

namespace tessera::kernels {

class Device;
class KernelLaunch;

class KernelReplay {
 public:
  // Null when `profiles` has no successful row of the kernel at its batch on this device, or when
  // its work is done inside another direction's call.
  static std::unique_ptr<KernelReplay> of(Device& device, const KernelToProfile& kernel,
                                          const ProfileDatabase& profiles);
  ~KernelReplay();
  KernelReplay(const KernelReplay&) = delete;
  KernelReplay& operator=(const KernelReplay&) = delete;

  // Issues the kernel once and waits for it.
  void run_once();

 private:
  KernelReplay(Device& device, const KernelToProfile& kernel);

  Device& device_;
  KernelToProfile kernel_;  // KernelLaunch refers to it
  std::unique_ptr<KernelLaunch> launch_;
  std::function<void()> call_;
};

}  // namespace tessera::kernels

#include "process/child_pool.hpp"

#include "process/child_process.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace tessera::sim {
namespace {

struct Running {
  std::size_t index = 0;
  pid_t pid = -1;
  int fd = -1;
  std::string text;
};

Running start(std::size_t index, const std::function<nlohmann::json()>& work) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw std::runtime_error("cannot create a pipe to a child process");
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error("cannot fork a child process");
  if (child == 0) {
    ::close(pipe_fds[0]);
    finish_child(pipe_fds[1], work);
  }
  ::close(pipe_fds[1]);
  return {index, child, pipe_fds[0], {}};
}

ChildOutcome reap(Running& running) {
  ::close(running.fd);
  int status = 0;
  ::waitpid(running.pid, &status, 0);
  ChildOutcome outcome;
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  auto message = nlohmann::json::parse(running.text, nullptr, false);
  if (!message.is_discarded()) outcome.message = std::move(message);
  return outcome;
}

}  // namespace

std::vector<ChildOutcome> run_in_children(const std::vector<std::function<nlohmann::json()>>& work,
                                          int jobs, const RunLimits& limits) {
  using Clock = std::chrono::steady_clock;
  std::vector<ChildOutcome> outcomes(work.size());
  std::vector<Running> running;
  std::size_t next = 0;
  const std::size_t most = static_cast<std::size_t>(std::max(jobs, 1));
  const auto passed = [&] { return limits.deadline && Clock::now() >= *limits.deadline; };
  char buffer[65536];
  while (next < work.size() || !running.empty()) {
    if (passed()) {
      for (auto& child : running) {
        ::kill(child.pid, SIGKILL);
        outcomes[child.index] = reap(child);
        outcomes[child.index].cut_off = true;
      }
      running.clear();
      for (; next < work.size(); ++next) outcomes[next].cut_off = true;
      break;
    }
    while (next < work.size() && running.size() < most) {
      running.push_back(start(next, work[next]));
      ++next;
    }
    std::vector<pollfd> fds;
    for (const auto& child : running) fds.push_back({child.fd, POLLIN, 0});
    int timeout_ms = -1;
    if (limits.deadline) {
      const auto left =
          std::chrono::ceil<std::chrono::milliseconds>(*limits.deadline - Clock::now());
      timeout_ms = static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, 1000));
    }
    if (::poll(fds.data(), fds.size(), timeout_ms) <= 0) continue;  // interrupted or timed out
    for (std::size_t i = running.size(); i-- > 0;) {
      if (fds[i].revents == 0) continue;
      const ssize_t n = ::read(running[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        running[i].text.append(buffer, static_cast<std::size_t>(n));
        continue;
      }
      outcomes[running[i].index] = reap(running[i]);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
      if (limits.on_finished) limits.on_finished();
    }
  }
  return outcomes;
}

}  // namespace tessera::sim

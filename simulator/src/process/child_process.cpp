#include "child_process.hpp"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>

#include <stdexcept>

namespace tessera::sim {
namespace {

void write_all(int fd, const std::string& text) {
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n <= 0) return;
    written += static_cast<std::size_t>(n);
  }
}

// Reads both pipes until the child closes them (either could fill while the other is drained).
void drain(int message_fd, int stderr_fd, std::string& message, std::string& errors) {
  pollfd fds[2] = {{message_fd, POLLIN, 0}, {stderr_fd, POLLIN, 0}};
  std::string* sinks[2] = {&message, &errors};
  int open = stderr_fd >= 0 ? 2 : 1;
  char buffer[65536];
  while (open > 0) {
    if (::poll(fds, stderr_fd >= 0 ? 2 : 1, -1) < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<std::size_t>(n));
      } else {
        fds[i].fd = -1;
        --open;
      }
    }
  }
}

}  // namespace

ChildOutcome run_in_child(const std::function<nlohmann::json()>& work, bool capture_stderr) {
  int message_pipe[2];
  int stderr_pipe[2] = {-1, -1};
  if (::pipe(message_pipe) != 0 || (capture_stderr && ::pipe(stderr_pipe) != 0)) {
    throw std::runtime_error("cannot create a pipe to a child process");
  }
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error("cannot fork a child process");
  if (child == 0) {
    ::close(message_pipe[0]);
    if (capture_stderr) {
      ::close(stderr_pipe[0]);
      ::dup2(stderr_pipe[1], STDERR_FILENO);
      ::close(stderr_pipe[1]);
    }
    finish_child(message_pipe[1], work);
  }
  ::close(message_pipe[1]);
  if (capture_stderr) ::close(stderr_pipe[1]);
  std::string text;
  ChildOutcome outcome;
  drain(message_pipe[0], stderr_pipe[0], text, outcome.captured_stderr);
  ::close(message_pipe[0]);
  if (capture_stderr) ::close(stderr_pipe[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  auto message = nlohmann::json::parse(text, nullptr, false);
  if (!message.is_discarded()) outcome.message = std::move(message);
  return outcome;
}

void finish_child(int message_fd, const std::function<nlohmann::json()>& work) {
  nlohmann::json message;
  int code = 0;
  try {
    message = work();
  } catch (const std::exception& error) {
    message = {{"error", error.what()}};
    code = 1;
  }
  write_all(message_fd, message.dump());
  ::close(message_fd);
  ::_exit(code);
}

std::string crash_text(int signal) {
  std::string text = "crashed (signal " + std::to_string(signal);
  if (signal == SIGABRT) {
    text +=
        ": aborted, by SimGrid where it printed its reason above (out of host memory for a "
        "sim.mode: full simulation of many GPUs, say)";
  } else if (signal == SIGKILL) {
    text += ": killed, by the system's out-of-memory killer or by hand";
  } else if (signal == SIGSEGV) {
    text += ": a segmentation fault";
  }
  return text + ")";
}

}  // namespace tessera::sim

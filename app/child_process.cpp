#include "child_process.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

extern char** environ;

namespace tessera::app {

int run_child(const std::vector<std::string>& arguments, const std::filesystem::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> argv;
  for (const auto& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  pid_t child = 0;
  const int spawned = posix_spawnp(&child, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return 127;
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return 127;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::vector<std::string> tessera_command(const std::vector<std::string>& launcher,
                                         std::int64_t ranks, std::vector<std::string> arguments,
                                         bool fresh) {
  if (fresh) arguments.push_back("--fresh");
  std::vector<std::string> command;
  if (ranks > 1) {
    command = launcher;
    command.insert(command.end(),
                   {"-np", std::to_string(ranks), "--oversubscribe", "-x", "OMP_NUM_THREADS"});
  }
  command.push_back(std::filesystem::read_symlink("/proc/self/exe").string());
  command.insert(command.end(), arguments.begin(), arguments.end());
  return command;
}

}  // namespace tessera::app

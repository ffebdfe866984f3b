#include "command_guard.hpp"

#include <iostream>
#include <new>
#include <string>

#include "tessera/core/common/input_error.hpp"

namespace tessera::app {
namespace {

// One write per message: under mpirun every rank's stderr lands in one stream, and a message
// written in pieces gets another rank's message in its middle.
void print_error(const std::string& message) {
  std::cerr << ("error: " + message + "\n");
}

}  // namespace

int run_guarded(const std::function<int()>& command) {
  try {
    return command();
  } catch (const InputError& error) {
    print_error(error.what());
    return kExitBadInput;
  } catch (const std::bad_alloc&) {
    print_error("out of host memory");
    return kExitFailure;
  } catch (const std::exception& error) {
    print_error(error.what());
    return kExitFailure;
  }
}

}  // namespace tessera::app

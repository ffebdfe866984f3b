#include "command_guard.hpp"

#include <iostream>
#include <new>

#include "tessera/core/input_error.hpp"

namespace tessera::app {

int run_guarded(const std::function<int()>& command) {
  try {
    return command();
  } catch (const InputError& error) {
    std::cerr << "error: " << error.what() << "\n";
    return kExitBadInput;
  } catch (const std::bad_alloc&) {
    std::cerr << "error: out of host memory\n";
    return kExitFailure;
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace tessera::app

#pragma once
#include <string>

namespace tessera::app {

// Version, build settings and the backend libraries' versions, one line each.
std::string version_text();

}  // namespace tessera::app

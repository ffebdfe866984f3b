#pragma once
#include <string>

namespace tessera::app {

// Version, build settings and the backend libraries' versions, one line each.
std::string version_text();

// The version and a digest of this very executable: what resume compares, so that a result is
// recomputed after any change to the code that made it, committed or not.
std::string build_identity();

}  // namespace tessera::app

#pragma once
// The current time as results and profiles record it: ISO 8601 in UTC, "2026-11-21T12:00:00Z".
#include <string>

namespace tessera {

std::string utc_now();

}  // namespace tessera

#pragma once
// The simulator moves sizes, not data: every message carries the address of one dummy, and
// every receive writes the address it got to one sink (actors share one thread: race-free).
namespace tessera::sim {

inline int kNoPayload = 0;
inline int* received_payload = nullptr;

}  // namespace tessera::sim

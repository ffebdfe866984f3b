#include "collectives/edge_stream.hpp"

#include <algorithm>
#include <cmath>

#include <simgrid/s4u/Engine.hpp>

namespace tessera::sim {

namespace s4u = simgrid::s4u;

void EdgeStream::send(double bytes) {
  const double slack = kSlack * latency_;
  for (;;) {
    retire();
    if (posted_.empty()) break;
    const double now = s4u::Engine::get_clock();
    const double matched = posted_.back().comm->get_start_time();
    double wake = -1;  // the receiver is not there yet: until the oldest chunk arrives
    if (matched >= 0 && now < matched + latency_ - slack) {
      wake = matched + latency_;  // the last chunk posted still pays its latency
    } else if (matched >= 0) {
      const double post_at = transfers_end(now) - latency_;
      if (std::isnan(post_at)) {
        wake = now + slack;  // no progress seen yet
      } else if (post_at <= now + slack) {
        break;
      } else {
        wake = std::min(post_at, now + std::max(kLook * latency_, (post_at - now) / 2));
      }
    }
    s4u::Comm::wait_any_for({posted_.front().comm}, wake < 0 ? -1.0 : wake - now);
  }
  posted_.push_back({fabric_.send_async(from_, to_, bytes, channel_), bytes});
}

void EdgeStream::drain() {
  for (const Posted& chunk : posted_) chunk.comm->wait();
  posted_.clear();
}

void EdgeStream::retire() {
  while (!posted_.empty() && Fabric::finished(posted_.front().comm)) {
    const Posted& chunk = posted_.front();
    const double duration =
        chunk.comm->get_finish_time() - (chunk.comm->get_start_time() + latency_);
    if (duration > 0) rate_ = chunk.bytes / duration;
    posted_.pop_front();
    ++retired_;
  }
}

double EdgeStream::transfers_end(double now) {
  const Posted& oldest = posted_.front();
  const double left = oldest.comm->get_remaining();
  double rate = rate_;
  if (seen_ == retired_ && now > seen_at_ && left < seen_left_) {
    rate = (seen_left_ - left) / (now - seen_at_);
  } else {
    const double started = oldest.comm->get_start_time() + latency_;
    if (now > started && left < oldest.bytes) rate = (oldest.bytes - left) / (now - started);
  }
  seen_ = retired_;
  seen_at_ = now;
  seen_left_ = left;
  if (!(rate > 0)) return std::numeric_limits<double>::quiet_NaN();
  double bytes_left = left;
  for (std::size_t index = 1; index < posted_.size(); ++index) {
    bytes_left += posted_[index].comm->get_remaining();
  }
  return now + bytes_left / rate;
}

}  // namespace tessera::sim

#pragma once
// The Pareto front of (workspace, time) the planner keeps at every step: items that no other item
// beats in both. One mechanism for profile options, partial plans and whole plans.
#include <algorithm>
#include <vector>

namespace tessera::planner {

// Keeps the items no other beats in both workspace and seconds (of equal items, the first in a
// stable order), sorted by increasing workspace and so strictly decreasing seconds.
template <typename Item, typename Workspace, typename Seconds>
std::vector<Item> pareto_front(std::vector<Item> items, Workspace workspace, Seconds seconds) {
  std::stable_sort(items.begin(), items.end(), [&](const Item& a, const Item& b) {
    if (workspace(a) != workspace(b)) return workspace(a) < workspace(b);
    return seconds(a) < seconds(b);
  });
  std::vector<Item> front;
  for (auto& item : items) {
    if (front.empty() || seconds(item) < seconds(front.back())) front.push_back(std::move(item));
  }
  return front;
}

}  // namespace tessera::planner

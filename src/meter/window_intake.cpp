#include "window_intake.h"

#include <algorithm>
#include <iterator>

namespace wattlab {

void IdRanges::insert(WindowId id) {
  auto next = runs_.upper_bound(id);  // the first run starting after id
  if (next != runs_.begin()) {
    auto prev = std::prev(next);
    if (prev->second >= id) return;  // already in
    if (prev->second + 1 == id) {
      prev->second = id;
      if (next != runs_.end() && next->first == id + 1) {
        prev->second = next->second;
        runs_.erase(next);
      }
      return;
    }
  }
  if (next != runs_.end() && next->first == id + 1) {
    const WindowId last = next->second;
    runs_.erase(next);
    runs_.emplace(id, last);
    return;
  }
  runs_.emplace(id, id);
}

bool IdRanges::contains(WindowId id) const {
  auto next = runs_.upper_bound(id);
  if (next == runs_.begin()) return false;
  return std::prev(next)->second >= id;
}

void WindowIntake::free_list(Node* n) {
  while (n) {
    Node* next = n->next;
    delete n;
    n = next;
  }
}

WindowIntake::~WindowIntake() {
  free_list(head_.exchange(nullptr, std::memory_order_acquire));
  free_list(returned_.exchange(nullptr, std::memory_order_acquire));
  free_list(pool_);
}

WindowIntake::Node* WindowIntake::take_node() {
  {
    std::lock_guard lk(pool_mu_);
    if (!pool_) pool_ = returned_.exchange(nullptr, std::memory_order_acquire);
    if (Node* n = pool_) {
      pool_ = n->next;
      return n;
    }
  }
  return new Node;
}

void WindowIntake::recycle(Node* n) {
  if (!returned_.load(std::memory_order_relaxed)) returned_count_ = 0;  // a caller took them all
  if (returned_count_ >= kPoolNodes) {
    delete n;
    return;
  }
  ++returned_count_;
  // One pusher (the drainer); callers only take the whole list, so a node is never popped alone.
  n->next = returned_.load(std::memory_order_relaxed);
  while (!returned_.compare_exchange_weak(n->next, n, std::memory_order_release, std::memory_order_relaxed)) {
  }
}

void WindowIntake::push(EdgeEvent::Kind kind, WindowId id, int64_t a_ns, int64_t b_ns, std::string_view name) {
  Node* n = take_node();
  n->event.kind = kind;
  n->event.id = id;
  n->event.a_ns = a_ns;
  n->event.b_ns = b_ns;
  n->event.name.assign(name);  // in the node's own buffer
  n->next = head_.load(std::memory_order_relaxed);
  while (!head_.compare_exchange_weak(n->next, n, std::memory_order_release, std::memory_order_relaxed)) {
  }
}

WindowId WindowIntake::open(std::string_view name, int64_t t_ns) {
  const WindowId id = next_id_.fetch_add(1, std::memory_order_relaxed);
  push(EdgeEvent::Kind::open, id, t_ns, -1, name);
  return id;
}

bool WindowIntake::close(WindowId id, int64_t t_ns) {
  if (!known(id)) return false;
  push(EdgeEvent::Kind::close, id, 0, t_ns, {});
  return true;
}

WindowId WindowIntake::add(std::string_view name, int64_t a_ns, int64_t b_ns) {
  const WindowId id = next_id_.fetch_add(1, std::memory_order_relaxed);
  push(EdgeEvent::Kind::add, id, a_ns, b_ns, name);
  return id;
}

void WindowIntake::drain(std::vector<EdgeEvent>& out) {
  Node* n = head_.exchange(nullptr, std::memory_order_acquire);
  if (!n) return;
  // The list is newest first: reverse it so the edges come out in the order they were pushed.
  Node* oldest = nullptr;
  while (n) {
    Node* next = n->next;
    n->next = oldest;
    oldest = n;
    n = next;
  }
  while (oldest) {
    Node* next = oldest->next;
    out.push_back(oldest->event);  // a copy: the node keeps its name's buffer for the next caller
    recycle(oldest);
    oldest = next;
  }
}

void WindowIntake::dropped(const std::vector<WindowId>& ids) {
  if (ids.empty()) return;
  std::lock_guard lk(dropped_mu_);
  WindowId newest = max_dropped_.load(std::memory_order_relaxed);
  for (WindowId id : ids) {
    dropped_.insert(id);
    newest = std::max(newest, id);
  }
  max_dropped_.store(newest, std::memory_order_release);
}

bool WindowIntake::known(WindowId id) const {
  if (id == 0 || id >= next_id_.load(std::memory_order_relaxed)) return false;
  if (id > max_dropped_.load(std::memory_order_acquire)) return true;  // the usual case: no lock
  std::lock_guard lk(dropped_mu_);
  return !dropped_.contains(id);
}

}  // namespace wattlab

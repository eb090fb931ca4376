// The callers' side of windows. open(), close() and add_window() hand their edges to the sampler
// through a lock-free queue and return: a caller never waits for the sampler, which may be reading
// a sensor (an H200 counter read takes 3-15 ms) or building results under the meter's lock. The
// only locks on the caller's path are held for a few instructions and never by the sampler while
// it works: the callers' pool of recycled queue nodes, and the ids of dropped results that close()
// checks. The sampler, or a thread that reads results, drains the queue under the meter's lock and
// applies the edges in the order they were pushed (window_book.h).
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "wattlab/meter/window.h"

namespace wattlab {

struct EdgeEvent {
  enum class Kind : uint8_t {
    open,   // a window opened at a_ns
    close,  // window `id` closed at b_ns
    add,    // a window with both edges (Meter::add_window)
  };
  Kind kind = Kind::open;
  WindowId id = 0;
  int64_t a_ns = 0;
  int64_t b_ns = -1;
  std::string name;
};

// Sorted, disjoint runs of ids: the ids of dropped results, which come mostly in order, in a few runs.
class IdRanges {
 public:
  void insert(WindowId id);
  bool contains(WindowId id) const;
  std::size_t runs() const { return runs_.size(); }

 private:
  std::map<WindowId, WindowId> runs_;  // first id -> last id (inclusive)
};

class WindowIntake {
 public:
  WindowIntake() = default;
  ~WindowIntake();
  WindowIntake(const WindowIntake&) = delete;
  WindowIntake& operator=(const WindowIntake&) = delete;

  WindowId open(std::string_view name, int64_t t_ns);
  // False (and nothing pushed) for an id never handed out, or one whose result was dropped.
  bool close(WindowId id, int64_t t_ns);
  WindowId add(std::string_view name, int64_t a_ns, int64_t b_ns);
  // Moves the edges pushed so far to the end of `out`, oldest first. One thread at a time.
  void drain(std::vector<EdgeEvent>& out);

  // The results of these windows were dropped (only the newest finished ones are kept).
  void dropped(const std::vector<WindowId>& ids);
  // Whether `id` was handed out and its result is still kept (or not made yet).
  bool known(WindowId id) const;

 private:
  struct Node {
    EdgeEvent event;
    Node* next = nullptr;
  };
  // Recycled nodes keep the caller's path free of malloc and of fresh pages to fault in (the tail
  // of open+close was those, once the lock was gone). At most this many wait in each of the
  // drainer's list and the callers' pool.
  static constexpr std::size_t kPoolNodes = 4096;
  void push(EdgeEvent::Kind kind, WindowId id, int64_t a_ns, int64_t b_ns, std::string_view name);
  Node* take_node();
  void recycle(Node* n);
  static void free_list(Node* n);

  // What the callers and the drainer both write sits on cache lines of its own.
  alignas(64) std::atomic<Node*> head_{nullptr};  // newest first
  alignas(64) std::atomic<WindowId> next_id_{1};
  std::mutex pool_mu_;    // callers only: the drainer never takes it
  Node* pool_ = nullptr;  // guarded by pool_mu_
  alignas(64) std::atomic<Node*> returned_{nullptr};  // nodes the drainer recycled; callers take the whole list
  std::size_t returned_count_ = 0;                    // drainer only: nodes it put there since a caller took them
  alignas(64) std::atomic<WindowId> max_dropped_{0};  // close() of a newer id needs no lookup
  // Held for one lookup or one batch of inserts, never while a sensor is read or a result built.
  mutable std::mutex dropped_mu_;
  IdRanges dropped_;
};

}  // namespace wattlab

// The meter's windows between their edges and their results: each window's begin edge anchored
// while the timeline still holds it (windows longer than the timeline keep working), its result
// built once the timelines cover its end, and only the newest finished results kept (each result
// is shared: the meter may hand it on as it becomes final). Not thread-safe: the meter holds its
// lock around every call.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "estimate.h"
#include "window_intake.h"
#include "wattlab/meter/window.h"

namespace wattlab {

struct WindowRec {
  WindowId id = 0;
  std::string name;
  int64_t a_ns = 0;
  int64_t b_ns = -1;  // -1 while open
  std::vector<std::optional<EdgeEstimate>> begin;  // anchored per domain
  std::shared_ptr<const WindowResult> final_result;  // null until final
  bool in_unanchored = false;  // listed in unanchored_ (begin not anchored for every counter domain)
  std::multimap<int64_t, WindowId>::iterator unanchored_it;
};

class WindowBook {
 public:
  WindowBook(std::size_t domains, bool any_counter, std::size_t finished_capacity)
      : domains_(domains), any_counter_(any_counter), finished_capacity_(finished_capacity) {}

  // An edge from the callers (window_intake.h), in the order they made them. A close of a window
  // closed already, or no longer kept, changes nothing.
  void apply(EdgeEvent& e);
  const WindowRec* find(WindowId id) const;

  struct Progress {
    bool more = false;          // more results are ready than max_final allowed
    bool finished_any = false;  // some result became final
  };
  // Anchors begin edges and builds the results whose ends the timelines now cover (or whose wait
  // timed out: a domain that stopped answering must not hold results back forever), at most
  // max_final of them. Results dropped to stay within the finished capacity go to `dropped`;
  // with `finished` given, each result made final is appended to it too, in the order made.
  // Incremental: only windows before the newest counter point are looked at, in time order.
  Progress process(const DomainTimelines& tl, int64_t now_ns, int64_t end_timeout_ns, std::size_t max_final,
                   std::vector<WindowId>& dropped,
                   std::vector<std::shared_ptr<const WindowResult>>* finished = nullptr);

  std::size_t size() const { return windows_.size(); }

 private:
  WindowRec& add(WindowId id, std::string name, int64_t a_ns, int64_t b_ns);
  void anchor(const DomainTimelines& tl, int64_t h_max);

  std::size_t domains_;
  bool any_counter_;
  std::size_t finished_capacity_;
  std::map<WindowId, WindowRec> windows_;
  // Not final yet: the only windows process() looks at, in time order.
  std::multimap<int64_t, WindowId> unanchored_;  // by begin: a counter domain's begin not anchored
  std::multimap<int64_t, WindowId> closed_;      // by end: closed, result not built
  std::deque<WindowId> finished_;                // final, oldest first; trimmed to finished_capacity_
  std::vector<int64_t> horizon_;                 // per domain: newest counter point (scratch)
  std::vector<char> blocked_;                    // per domain: a begin edge was not final yet (scratch)
};

}  // namespace wattlab

#include "window_book.h"

#include <algorithm>
#include <climits>
#include <utility>

namespace wattlab {

WindowRec& WindowBook::add(WindowId id, std::string name, int64_t a_ns, int64_t b_ns) {
  WindowRec& w = windows_[id];
  w.id = id;
  w.name = std::move(name);
  w.a_ns = a_ns;
  w.b_ns = b_ns;
  w.begin.resize(domains_);
  if (any_counter_) {
    w.unanchored_it = unanchored_.emplace(a_ns, id);
    w.in_unanchored = true;
  }
  if (b_ns >= 0) closed_.emplace(b_ns, id);
  return w;
}

void WindowBook::apply(EdgeEvent& e) {
  switch (e.kind) {
    case EdgeEvent::Kind::open: add(e.id, std::move(e.name), e.a_ns, -1); break;
    case EdgeEvent::Kind::add: add(e.id, std::move(e.name), e.a_ns, e.b_ns); break;
    case EdgeEvent::Kind::close: {
      auto it = windows_.find(e.id);
      if (it != windows_.end() && it->second.b_ns < 0) {
        it->second.b_ns = e.b_ns;
        closed_.emplace(e.b_ns, e.id);
      }
      break;
    }
  }
}

const WindowRec* WindowBook::find(WindowId id) const {
  auto it = windows_.find(id);
  return it == windows_.end() ? nullptr : &it->second;
}

// A begin edge can anchor only once a counter point lies after it. Coverage only grows with time:
// once an edge of domain d has data but is not final yet (the sample buffer lags the counter), no
// later edge of d is final either. Without this stop a second of windows made back to back
// (hundreds of thousands) was retried after every read.
void WindowBook::anchor(const DomainTimelines& tl, int64_t h_max) {
  blocked_.assign(domains_, 0);
  std::size_t n_blocked = 0, n_counter = 0;
  for (std::size_t d = 0; d < domains_; ++d) n_counter += tl.timelines[d].has_counter();
  for (auto it = unanchored_.begin(); it != unanchored_.end() && it->first < h_max && n_blocked < n_counter;) {
    WindowRec& w = windows_.at(it->second);
    bool all = true;
    for (std::size_t d = 0; d < domains_; ++d) {
      if (w.begin[d] || !tl.timelines[d].has_counter()) continue;
      if (w.a_ns < horizon_[d] && !blocked_[d]) {
        const EdgeEstimate e = tl.timelines[d].energy_at(w.a_ns);
        if (e.ok && e.covered) w.begin[d] = e;
        else if (e.ok) n_blocked += (blocked_[d] = 1);
      }
      if (!w.begin[d]) all = false;
    }
    if (!all) {
      ++it;
      continue;
    }
    w.in_unanchored = false;
    it = unanchored_.erase(it);
  }
}

WindowBook::Progress WindowBook::process(const DomainTimelines& tl, int64_t now_ns, int64_t end_timeout_ns,
                                         std::size_t max_final, std::vector<WindowId>& dropped,
                                         std::vector<std::shared_ptr<const WindowResult>>* finished) {
  horizon_.resize(domains_);
  int64_t h_max = INT64_MIN, h_min = INT64_MAX;
  for (std::size_t d = 0; d < domains_; ++d) {
    const Timeline& t = tl.timelines[d];
    horizon_[d] = t.has_counter() ? t.newest_counter_ns() : INT64_MIN;
    if (!t.has_counter()) continue;
    h_max = std::max(h_max, horizon_[d]);
    if (!tl.states[d].lost) h_min = std::min(h_min, horizon_[d]);
  }
  anchor(tl, h_max);
  Progress p;
  std::size_t built = 0;
  for (auto it = closed_.begin(); it != closed_.end();) {
    const int64_t b = it->first;
    const bool timed_out = now_ns - b > end_timeout_ns;
    if (!timed_out && b >= h_min) break;  // no later end can be covered yet
    bool covered = true;
    for (std::size_t d = 0; d < domains_ && covered; ++d)
      if (!tl.states[d].lost && !end_is_covered(tl.timelines[d], b)) covered = false;
    // Ends are in time order and coverage only grows with time: no later end is covered either.
    if (!covered && !timed_out) break;
    if (built >= max_final) {
      p.more = true;
      break;
    }
    WindowRec& w = windows_.at(it->second);
    w.final_result = std::make_shared<const WindowResult>(build_window_result(tl, w.id, w.name, w.a_ns, w.b_ns, w.begin, true));
    if (finished) finished->push_back(w.final_result);
    if (w.in_unanchored) {
      unanchored_.erase(w.unanchored_it);
      w.in_unanchored = false;
    }
    ++built;
    p.finished_any = true;
    finished_.push_back(w.id);
    it = closed_.erase(it);
  }
  // Bounded memory: only the newest finished results are kept.
  while (finished_.size() > finished_capacity_) {
    windows_.erase(finished_.front());
    dropped.push_back(finished_.front());
    finished_.pop_front();
  }
  return p;
}

}  // namespace wattlab

#include "wattlab/record/recording.h"

#include <algorithm>
#include <exception>
#include <unordered_map>

#include "cpu_cost.h"
#include "record/host.h"

namespace wattlab {
namespace {

// Readings handed in by the caller are stored at once past this many: memory stays bounded on
// virtual time, where no flush thread runs.
constexpr std::size_t kFlushAtReadings = 20000;
// Virtual time: end() advances the meter in these steps until every window's result is final.
constexpr int64_t kVirtualStepNs = 100'000'000;
constexpr int kVirtualMaxSteps = 100;

// Said after "N readings, M windows" when annotations of stored windows did not reach the store.
std::string annotations_lacked(const StoreHealth& h) {
  if (!h.annotations_pending) return "";
  return ", the labels and counts of " + std::to_string(h.annotations_pending) + " stored windows";
}

[[noreturn]] void fail(ErrorKind kind, std::string what, std::string hint = "") {
  throw WattlabError(Error{kind, std::move(what), std::move(hint), 0});
}

}  // namespace

Recording::Recording(RecordingOptions options) : opt_(std::move(options)) {
  opened_ = open_sensors(opt_.devices);
  simulated_ = opened_.simulated();
  for (const auto& s : opened_.sensors) devices_.push_back({s->backend(), s->properties()});
  clock_ = opt_.devices.clock ? opt_.devices.clock : &MonotonicClock::instance();
}

Recording::Recording(Meter& meter, std::vector<DeviceProperties> devices, bool simulated, RecordingOptions options)
    : opt_(std::move(options)), simulated_(simulated), devices_(std::move(devices)), clock_(&meter.clock()),
      meter_(&meter) {}

Recording::~Recording() {
  try {
    end(kAbandonedStatus);
  } catch (const std::exception& e) {
    note(std::string("ending the run failed: ") + e.what());
  }
  if (taking_results_) meter_->set_result_sink({});  // a meter that outlives the recording
}

std::size_t Recording::domain_count() const { return meter_ ? meter_->domains().size() : opened_.domain_count(); }

bool Recording::start() {
  if (started_ || ended()) fail(ErrorKind::internal, "Recording::start() after start() or end()");
  std::vector<Domain> domains;
  if (!meter_ && opt_.use_meter) {
    own_meter_ = std::make_unique<Meter>(std::move(opened_.sensors), *clock_, opt_.meter);
    opened_.sensors.clear();
    meter_ = own_meter_.get();
  }
  if (meter_) {
    domains = meter_->domains();
  } else {
    for (const auto& s : opened_.sensors) domains.insert(domains.end(), s->domains().begin(), s->domains().end());
  }
  started_ = true;
  begin_run(domains);
  if (meter_ && store_) {
    // Every result reaches the store, however many become final together: the meter hands each
    // one over as it becomes final, and it is held here until a flush stores it.
    meter_->set_result_sink([this](std::span<const std::shared_ptr<const WindowResult>> results) { take(results); });
    taking_results_ = true;
  }
  bool first_reads = true;
  if (own_meter_ && !clock_->is_virtual()) {
    cpu0_ns_ = record_detail::process_cpu_ns();
    span0_ns_ = clock_->now_ns();
    own_meter_->start();
    // Every sensor read once, so that a window opened next has a reading before its begin edge.
    first_reads = own_meter_->wait_first_reads(opt_.first_reads_timeout);
  }
  if (store_ && !clock_->is_virtual())
    flusher_ = std::make_unique<Flusher>([this] { flush(); }, opt_.flush_interval_ns,
                                         [this](std::string_view e) { note(std::string("flush: ") + std::string(e)); });
  return first_reads;
}

void Recording::begin_run(const std::vector<Domain>& domains) {
  start_t_ns_ = clock_->now_ns();
  if (opt_.store) {
    store_ = opt_.store;
  } else if (!opt_.db.empty()) {
    auto s = Store::open(opt_.db);
    if (!s) throw WattlabError(s.error());
    own_store_.emplace(std::move(*s));
    store_ = &*own_store_;
  }
  if (!store_) return;
  RunInfo info;
  info.command = opt_.command;
  info.host = host_name();
  info.start_utc = utc_iso8601(std::chrono::system_clock::now());
  info.start_t_ns = start_t_ns_;
  info.simulated = simulated_;
  info.device_selection = opt_.devices.device;
  info.devices = devices_;
  info.tags = opt_.tags;
  info_ = info;
  domains_ = domains;
  auto id = store_->begin_run(info);
  if (!id) {
    store_ = nullptr;  // no run to write to
    throw WattlabError(id.error());
  }
  run_id_ = *id;
  if (auto st = store_->add_domains(run_id_, domains); !st) throw WattlabError(st.error());
}

Meter& Recording::meter() {
  if (!meter_)
    fail(ErrorKind::internal, "Recording::meter(): there is no meter",
         "call start() first; a recording made with use_meter = false has none");
  return *meter_;
}

Store& Recording::store() {
  if (!store_) fail(ErrorKind::internal, "Recording::store(): this recording stores nothing", "give db or store");
  return *store_;
}

Recording::Tracked* Recording::find(WindowId id) {
  auto it = tracked_.find(id);
  return it == tracked_.end() ? nullptr : &it->second;
}

void Recording::take(std::span<const std::shared_ptr<const WindowResult>> results) {
  std::lock_guard lk(mu_);
  for (const auto& r : results) {
    Tracked* t = find(r->id);
    if (!t || t->held || t->stored_final) continue;  // not this recording's, or taken already
    // While the store fails, what is held is bounded: a result past kMaxPendingWindows is not
    // held; a flush takes it from the meter while the meter keeps it, and counts it lost when
    // storing it fails or the meter no longer has it.
    if (failing_ && windows_held_ >= kMaxPendingWindows) continue;
    t->held = r;
    ++windows_held_;
  }
}

void Recording::queue(Tracked& t) {
  if (t.queued) return;
  t.queued = true;
  due_.push_back(t.id);
}

void Recording::remember_stored(Tracked& t) {
  t.stored_seq = ++stored_seq_;
  stored_.emplace_back(t.id, t.stored_seq);
}

WindowId Recording::open(std::string_view name, const std::function<void()>& sync) {
  const WindowId id = meter().open(name, sync);
  std::lock_guard lk(mu_);
  tracked_[id] = Tracked{id, std::string(name)};
  return id;
}

void Recording::close(WindowId id, const std::function<void()>& sync) {
  meter().close(id, sync);
  std::lock_guard lk(mu_);
  if (Tracked* t = find(id); t && !t->closed) {
    t->closed = true;
    queue(*t);
  }
}

WindowId Recording::add_window(std::string_view name, int64_t t_begin_ns, int64_t t_end_ns,
                               std::map<std::string, std::string> labels, std::map<std::string, double> counts) {
  // Held across the meter's add_window: its result, which may be final at once, is handed over
  // (take) only once the window is tracked.
  std::lock_guard lk(mu_);
  const WindowId id = meter().add_window(name, t_begin_ns, t_end_ns);
  Tracked& t = tracked_[id] = Tracked{.id = id, .name = std::string(name), .closed = true, .labels = std::move(labels),
                                      .counts = std::move(counts)};
  queue(t);
  return id;
}

void Recording::annotate(WindowId id, const std::map<std::string, std::string>& labels,
                         const std::map<std::string, double>& counts) {
  std::lock_guard lk(mu_);
  Tracked* t = find(id);
  if (!t)
    fail(ErrorKind::not_found, "Recording::annotate: window " + std::to_string(id) +
                                   " is not one of this recording's, or was stored more than " +
                                   std::to_string(kKeepStoredWindows) + " windows ago");
  for (const auto& [k, v] : labels) t->labels[k] = v;
  for (const auto& [k, v] : counts) t->counts[k] = v;
  ++t->version;
  if (t->stored_final) {
    // Stored: only its labels and counts go to the store again, so the meter's result (which the
    // meter may have dropped since) is not needed.
    if (!t->annotation_due) ++annotations_due_;
    t->annotation_due = true;
    queue(*t);
  } else if (t->closed) {
    queue(*t);
  }
}

WindowResult Recording::annotated(const Tracked& t, WindowResult r) const {
  for (const auto& [k, v] : t.labels) r.labels[k] = v;
  for (const auto& [k, v] : t.counts) r.counts[k] = v;
  return r;
}

WindowResult Recording::result(WindowId id, std::chrono::milliseconds timeout) {
  WindowResult r = meter().wait_result(id, timeout);
  std::lock_guard lk(mu_);
  if (const Tracked* t = find(id)) return annotated(*t, std::move(r));
  return r;
}

void Recording::store_window(const WindowResult& window) {
  std::lock_guard f(flush_mu_);
  if (!store_) return;
  if (auto st = store_->add_window(run_id_, window); !st) throw WattlabError(st.error());
}

void Recording::set_tag(const std::string& key, const std::string& value) {
  if (!store_) return;
  if (auto st = store_->set_run_tag(run_id_, key, value); !st) throw WattlabError(st.error());
}

Status Recording::append_readings(std::span<const TimedReading> readings) {
  {
    std::lock_guard lk(mu_);
    if (ended_)
      return Error{ErrorKind::unavailable, "the run has ended: " + std::to_string(readings.size()) + " readings dropped",
                   "", 0};
    pending_.insert(pending_.end(), readings.begin(), readings.end());
    if (pending_.size() < kFlushAtReadings) return {};
  }
  return flush();
}

void Recording::note(std::string_view text) const {
  if (opt_.on_note) opt_.on_note(text);
}

void Recording::store_failed(const Error& e) {
  bool tell = false;
  {
    std::lock_guard lk(mu_);
    ++health_.failures;
    if (!health_.first_error) health_.first_error = e;
    tell = !failing_;
    failing_ = true;
  }
  // Once per outage: a store that stays broken would otherwise say so every flush.
  if (tell) note("storing the run failed: " + e.message() + "; what was not stored is kept in memory and tried again");
}

StoreHealth Recording::store_health() const {
  std::lock_guard lk(mu_);
  StoreHealth h = health_;
  h.readings_pending = pending_.size();
  h.windows_pending = windows_held_;
  h.annotations_pending = annotations_due_;
  return h;
}

std::size_t Recording::windows_tracked() const {
  std::lock_guard lk(mu_);
  return tracked_.size();
}

Status Recording::flush() {
  std::lock_guard f(flush_mu_);
  return flush_locked();
}

Status Recording::flush_locked() {
  if (!store_) return {};
  bool failed = false;
  std::vector<TimedReading> batch;
  {
    std::lock_guard lk(mu_);
    batch.swap(pending_);
  }
  if (meter_) meter_->drain_readings(batch);
  if (!batch.empty()) {
    if (auto st = store_->append_readings(run_id_, batch); !st) {
      failed = true;
      store_failed(st.error());
      // Kept, oldest first, for the next flush; past the bound the oldest go (counted).
      std::lock_guard lk(mu_);
      batch.insert(batch.end(), pending_.begin(), pending_.end());
      if (batch.size() > kMaxPendingReadings) {
        const std::size_t drop = batch.size() - kMaxPendingReadings;
        health_.readings_lost += drop;
        batch.erase(batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(drop));
      }
      pending_.swap(batch);
    }
  }
  if (meter_) {
    const std::vector<MeterEvent> events = meter_->events();
    if (events.size() > events_stored_) {
      const std::span<const MeterEvent> fresh(events.begin() + static_cast<std::ptrdiff_t>(events_stored_), events.end());
      if (auto st = store_->append_events(run_id_, fresh); !st) {
        failed = true;
        store_failed(st.error());
      } else {
        events_stored_ = events.size();
      }
      std::lock_guard lk(mu_);
      health_.events_pending = events.size() - events_stored_;
    }
    const std::size_t failures = store_health().failures;
    store_due_windows();
    if (store_health().failures != failures) failed = true;
  }
  bool recovered = false;
  Status status;
  {
    std::lock_guard lk(mu_);
    if (!failed && failing_) {
      failing_ = false;
      recovered = true;
    }
    const bool outstanding = !pending_.empty() || windows_held_ != 0 || annotations_due_ != 0 || health_.readings_lost ||
                             health_.windows_lost || health_.events_pending;
    if (outstanding && health_.first_error) status = *health_.first_error;
  }
  if (recovered) note("the store works again: what was kept in memory is stored now");
  return status;
}

// Stores the windows whose result is final (with their annotations), oldest first, then the
// annotations of windows stored before. A window that fails keeps its result in memory (the meter
// keeps only the newest results) and is tried again; an annotation that fails stays due.
void Recording::store_due_windows() {
  std::deque<WindowId> ids;
  {
    std::lock_guard lk(mu_);
    ids.swap(due_);
    for (WindowId id : ids)
      if (Tracked* t = find(id)) t->queued = false;
  }
  std::vector<WindowResult> batch;
  std::vector<std::pair<WindowId, unsigned>> batch_ids;  // id and the version stored
  std::vector<WindowAnnotation> notes;                   // annotations of stored windows
  std::vector<std::pair<WindowId, unsigned>> note_ids;
  std::deque<WindowId> later;
  for (WindowId id : ids) {
    std::shared_ptr<const WindowResult> held;
    {
      std::lock_guard lk(mu_);
      const Tracked* t = find(id);
      if (!t) continue;
      if (t->stored_final) {
        if (t->annotation_due) {
          notes.push_back(WindowAnnotation{t->id, t->labels, t->counts});
          note_ids.emplace_back(id, t->version);
        }
        continue;
      }
      held = t->held;
    }
    std::optional<WindowResult> r;
    if (held) r = *held;
    else r = meter_->result(id);
    if (!r) {
      later.push_back(id);  // not final yet
      continue;
    }
    std::lock_guard lk(mu_);
    const Tracked* t = find(id);
    batch.push_back(annotated(*t, *r));
    batch_ids.emplace_back(id, t->version);
  }
  Status st;
  if (!batch.empty()) st = store_->add_windows(run_id_, batch);
  if (!st) store_failed(st.error());
  Status note_st;
  if (!notes.empty()) note_st = store_->annotate_windows(run_id_, notes);
  if (!note_st) store_failed(note_st.error());
  std::lock_guard lk(mu_);
  for (std::size_t i = 0; i < batch_ids.size(); ++i) {
    Tracked* t = find(batch_ids[i].first);
    if (!t) continue;
    if (st) {
      if (t->held) {
        t->held.reset();
        --windows_held_;
      }
      t->stored_final = true;
      remember_stored(*t);
      if (t->version != batch_ids[i].second && !t->annotation_due) {  // annotated meanwhile: queued again
        t->annotation_due = true;
        ++annotations_due_;
      }
    } else {
      if (!t->held) {
        if (windows_held_ >= kMaxPendingWindows) {
          ++health_.windows_lost;
          continue;
        }
        batch[i].labels.clear();  // annotated again when stored
        batch[i].counts.clear();
        t->held = std::make_shared<const WindowResult>(std::move(batch[i]));
        ++windows_held_;
      }
      later.push_back(t->id);
    }
  }
  for (std::size_t i = 0; i < note_ids.size(); ++i) {
    Tracked* t = find(note_ids[i].first);
    if (!t) continue;
    if (!note_st) {
      later.push_back(t->id);
    } else if (t->version == note_ids[i].second && t->annotation_due) {  // else annotated meanwhile: queued again
      t->annotation_due = false;
      --annotations_due_;
      remember_stored(*t);  // known for annotate() as long as a window stored now
    }
  }
  for (WindowId id : later)
    if (Tracked* t = find(id)) queue(*t);
  // Bounded memory: a stored window is forgotten once enough newer ones are stored.
  while (stored_.size() > kKeepStoredWindows) {
    const auto [id, seq] = stored_.front();
    auto it = tracked_.find(id);
    if (it != tracked_.end() && it->second.stored_final && !it->second.queued && it->second.stored_seq == seq)
      tracked_.erase(it);
    stored_.pop_front();
  }
}

void Recording::finish_windows() {
  std::vector<WindowId> open_ids;
  {
    std::lock_guard lk(mu_);
    for (const auto& [id, t] : tracked_)
      if (!t.closed) open_ids.push_back(id);
  }
  std::sort(open_ids.begin(), open_ids.end());
  for (WindowId id : open_ids) {
    meter_->close(id);
    std::string name;
    {
      std::lock_guard lk(mu_);
      Tracked& t = tracked_.at(id);
      t.closed = true;
      queue(t);
      name = t.name;
    }
    note("window '" + name + "' was still open when the run ended; it ends there");
  }
  if (own_meter_ && clock_->is_virtual()) {
    // Nobody else moves virtual time: move it until the timeline covers every window's end,
    // storing results as they become final (the meter keeps only the newest).
    for (int step = 0; step < kVirtualMaxSteps; ++step) {
      flush();
      bool all_final = true;
      {
        std::lock_guard lk(mu_);
        for (WindowId id : due_)
          if (const Tracked& t = tracked_.at(id); !t.stored_final && !t.held && !meter_->result(id)) {
            all_final = false;
            break;
          }
      }
      if (all_final) break;
      own_meter_->advance_to(clock_->now_ns() + kVirtualStepNs);
    }
  }
  std::vector<WindowId> ids;
  {
    std::lock_guard lk(mu_);
    ids.assign(due_.begin(), due_.end());
  }
  for (WindowId id : ids) {
    std::string name;
    {
      std::lock_guard lk(mu_);
      const Tracked& t = tracked_.at(id);
      if (t.held || t.stored_final) continue;  // stored_final: only its annotation is due
      name = t.name;
    }
    try {
      // Final, or provisional when the timeline never covered its end within the wait.
      auto r = std::make_shared<const WindowResult>(meter_->wait_result(id, std::chrono::seconds(5)));
      std::lock_guard lk(mu_);
      Tracked& t = tracked_.at(id);
      if (t.held) continue;  // handed over by the meter meanwhile
      t.held = std::move(r);
      ++windows_held_;
    } catch (const std::exception& e) {  // its result was dropped (MeterOptions::finished_window_capacity)
      std::lock_guard lk(mu_);
      ++health_.windows_lost;
      if (!health_.first_error) health_.first_error = Error{ErrorKind::internal, "window '" + name + "': " + e.what(), "", 0};
    }
  }
}

void Recording::end(int exit_status) {
  std::lock_guard e(end_mu_);
  {
    std::lock_guard lk(mu_);
    if (ended_) return;
    ended_ = true;
  }
  if (auto err = end_locked(exit_status)) throw WattlabError(*err);
}

bool Recording::ended() const {
  std::lock_guard lk(mu_);
  return ended_;
}

std::optional<Error> Recording::end_locked(int exit_status) {
  if (!started_) return std::nullopt;
  if (meter_) finish_windows();
  const bool cost = opt_.cpu_cost_tags && own_meter_ && !clock_->is_virtual();
  if (own_meter_) own_meter_->stop();
  const int64_t span_ns = clock_->now_ns() - span0_ns_;
  if (flusher_) flusher_->finish();  // joins the thread, then flushes once more
  std::lock_guard f(flush_mu_);
  if (!flusher_) flush_locked();
  if (taking_results_) {
    meter_->set_result_sink({});
    taking_results_ = false;
  }
  {
    std::lock_guard lk(mu_);
    end_status_ = exit_status;
    end_t_ns_ = clock_->now_ns();
  }
  if (!store_) return std::nullopt;
  if (cost)
    for (const auto& [k, v] :
         record_detail::cpu_cost_tags(meter_->snapshot().sampler, record_detail::process_cpu_ns() - cpu0_ns_, span_ns))
      if (auto st = store_->set_run_tag(run_id_, k, v); !st) store_failed(st.error());
  // What the store lacks is said beside the run (when it can still take that), then the end.
  if (const StoreHealth now = store_health(); now.incomplete()) {
    const std::string lacks = std::to_string(now.readings_pending + now.readings_lost) + " readings, " +
                              std::to_string(now.windows_pending + now.windows_lost) + " windows" +
                              annotations_lacked(now);
    if (auto st = store_->set_run_tag(run_id_, "wattlab.store_lacks", lacks); !st) store_failed(st.error());
  }
  if (auto st = store_->end_run(run_id_, end_t_ns_, exit_status); !st) {
    store_failed(st.error());
    std::lock_guard lk(mu_);
    health_.end_stored = false;
  }
  const StoreHealth h = store_health();
  if (!h.incomplete()) return std::nullopt;
  std::string what = store_->path().string() + " lacks part of run " + std::to_string(run_id_) + ": " +
                     std::to_string(h.readings_pending + h.readings_lost) + " readings, " +
                     std::to_string(h.windows_pending + h.windows_lost) + " windows" + annotations_lacked(h) +
                     (h.end_stored ? "" : ", the run's end");
  if (h.first_error) what += " (first failure: " + h.first_error->message() + ")";
  return Error{ErrorKind::io, what, "the summary and --json output hold the whole run; free space or fix the device", 0};
}

RunRecord Recording::summary() const {
  RunRecord run;
  std::optional<Result<RunRecord>> stored;
  if (store_) stored = store_->load_run(run_id_);
  std::lock_guard lk(mu_);
  if (stored && *stored) {
    run = std::move(**stored);
  } else {
    run.run_id = run_id_;
    run.info = info_;
    run.domains = domains_;
    if (meter_) run.events = meter_->events();
  }
  if (!run.end_t_ns && end_status_) {
    run.end_t_ns = end_t_ns_;
    run.exit_status = *end_status_;
  }
  // Windows the store lacks, from memory; all in id order (the order they were opened).
  std::unordered_map<WindowId, std::size_t> at;
  for (std::size_t i = 0; i < run.windows.size(); ++i) at[run.windows[i].id] = i;
  for (const auto& [id, t] : tracked_) {
    if (t.annotation_due)  // stored, its latest annotation not yet
      if (auto it = at.find(id); it != at.end()) run.windows[it->second] = annotated(t, std::move(run.windows[it->second]));
    if (!t.held) continue;
    WindowResult r = annotated(t, *t.held);
    if (auto it = at.find(id); it != at.end()) run.windows[it->second] = std::move(r);
    else run.windows.push_back(std::move(r));
  }
  std::stable_sort(run.windows.begin(), run.windows.end(), [](const WindowResult& a, const WindowResult& b) { return a.id < b.id; });
  run.window_count = static_cast<int64_t>(run.windows.size());
  return run;
}

}  // namespace wattlab

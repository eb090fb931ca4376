#include "wattlab/record/recording.h"

#include <algorithm>
#include <exception>

#include "cpu_cost.h"
#include "wattlab/record/host.h"

namespace wattlab {
namespace {

// Readings handed in by the caller are stored at once past this many: memory stays bounded on
// virtual time, where no flush thread runs.
constexpr std::size_t kFlushAtReadings = 20000;
// Virtual time: end() advances the meter in these steps until every window's result is final.
constexpr int64_t kVirtualStepNs = 100'000'000;
constexpr int kVirtualMaxSteps = 100;

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
  // Newest first: a window closes, and is annotated, soon after it opened, so a long run's close
  // stays cheap.
  for (auto it = tracked_.rbegin(); it != tracked_.rend(); ++it)
    if (it->id == id) return &*it;
  return nullptr;
}

WindowId Recording::open(std::string_view name, const std::function<void()>& sync) {
  const WindowId id = meter().open(name, sync);
  std::lock_guard lk(mu_);
  tracked_.push_back({id, std::string(name)});
  return id;
}

void Recording::close(WindowId id, const std::function<void()>& sync) {
  meter().close(id, sync);
  std::lock_guard lk(mu_);
  if (Tracked* t = find(id)) t->closed = true;
}

WindowId Recording::add_window(std::string_view name, int64_t t_begin_ns, int64_t t_end_ns,
                               std::map<std::string, std::string> labels, std::map<std::string, double> counts) {
  const WindowId id = meter().add_window(name, t_begin_ns, t_end_ns);
  std::lock_guard lk(mu_);
  tracked_.push_back({id, std::string(name), true, false, 0, std::move(labels), std::move(counts)});
  return id;
}

void Recording::annotate(WindowId id, const std::map<std::string, std::string>& labels,
                         const std::map<std::string, double>& counts) {
  std::lock_guard lk(mu_);
  Tracked* t = find(id);
  if (!t) fail(ErrorKind::not_found, "Recording::annotate: window " + std::to_string(id) + " is not one of this recording's");
  for (const auto& [k, v] : labels) t->labels[k] = v;
  for (const auto& [k, v] : counts) t->counts[k] = v;
  t->stored_final = false;
  ++t->version;
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

void Recording::keep_error(const Error& e, bool tell) {
  bool first = false;
  {
    std::lock_guard lk(mu_);
    if (!first_error_) {
      first_error_ = e;
      first = true;
    }
  }
  // Only the first: a store that stays broken would otherwise say so every flush.
  if (first && tell) note("storing the run failed: " + e.message());
}

Status Recording::flush() {
  std::lock_guard f(flush_mu_);
  return flush_locked();
}

Status Recording::flush_locked() {
  if (store_) {
    std::vector<TimedReading> batch;
    if (meter_) meter_->drain_readings(batch);
    {
      std::lock_guard lk(mu_);
      batch.insert(batch.end(), pending_.begin(), pending_.end());
      pending_.clear();
    }
    if (!batch.empty())
      if (auto st = store_->append_readings(run_id_, batch); !st) keep_error(st.error(), true);
    if (meter_) {
      const std::vector<MeterEvent> events = meter_->events();
      if (events.size() > events_stored_) {
        const std::span<const MeterEvent> fresh(events.begin() + static_cast<std::ptrdiff_t>(events_stored_), events.end());
        if (auto st = store_->append_events(run_id_, fresh); !st) keep_error(st.error(), true);
        else events_stored_ = events.size();
      }
      // Windows whose result became final: stored now, so a killed process keeps them.
      std::vector<Tracked> due;
      {
        std::lock_guard lk(mu_);
        for (const auto& t : tracked_)
          if (t.closed && !t.stored_final) due.push_back(t);
      }
      for (const auto& t : due) {
        const std::optional<WindowResult> r = meter_->result(t.id);
        if (!r) continue;
        if (auto st = store_->add_window(run_id_, annotated(t, *r)); !st) {
          keep_error(st.error(), true);
          continue;
        }
        std::lock_guard lk(mu_);
        if (Tracked* now = find(t.id); now && now->version == t.version) now->stored_final = true;
      }
    }
  }
  std::lock_guard lk(mu_);
  return first_error_ ? Status(*first_error_) : Status();
}

void Recording::finish_windows(std::vector<WindowResult>& results) {
  std::vector<Tracked> all;
  {
    std::lock_guard lk(mu_);
    all = tracked_;
  }
  for (const auto& t : all)
    if (!t.closed) {
      meter_->close(t.id);
      note("window '" + t.name + "' was still open when the run ended; it ends there");
    }
  if (own_meter_ && clock_->is_virtual()) {
    // Nobody else moves virtual time: move it until the timeline covers every window's end.
    for (int step = 0; step < kVirtualMaxSteps; ++step) {
      const bool all_final = std::all_of(all.begin(), all.end(), [&](const Tracked& t) { return meter_->result(t.id).has_value(); });
      if (all_final) break;
      own_meter_->advance_to(clock_->now_ns() + kVirtualStepNs);
    }
  }
  for (const auto& t : all) {
    try {
      results.push_back(annotated(t, meter_->wait_result(t.id, std::chrono::seconds(5))));
    } catch (const std::exception& e) {  // its result was dropped (MeterOptions::finished_window_capacity)
      keep_error(Error{ErrorKind::internal, "window '" + t.name + "': " + e.what(), "", 0}, false);
    }
  }
  std::lock_guard lk(mu_);
  // end() stores them below, in order: the last flush need not.
  for (auto& t : tracked_) t.stored_final = true;
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
  std::vector<WindowResult> results;
  if (meter_) finish_windows(results);
  const bool cost = opt_.cpu_cost_tags && own_meter_ && !clock_->is_virtual();
  if (own_meter_) own_meter_->stop();
  const int64_t span_ns = clock_->now_ns() - span0_ns_;
  if (flusher_) flusher_->finish();  // joins the thread, then flushes once more
  std::lock_guard f(flush_mu_);
  if (!flusher_) flush_locked();
  if (store_) {
    for (const auto& r : results)
      if (auto st = store_->add_window(run_id_, r); !st) keep_error(st.error(), false);
    if (cost)
      for (const auto& [k, v] :
           record_detail::cpu_cost_tags(meter_->snapshot().sampler, record_detail::process_cpu_ns() - cpu0_ns_, span_ns))
        if (auto st = store_->set_run_tag(run_id_, k, v); !st) keep_error(st.error(), false);
    if (auto st = store_->end_run(run_id_, clock_->now_ns(), exit_status); !st) keep_error(st.error(), false);
  }
  std::lock_guard lk(mu_);
  return first_error_;
}

}  // namespace wattlab

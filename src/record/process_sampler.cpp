// The per-process poller (process_sampler.h): polls, labels from /proc, the idle floor, and the
// split of an interval's energy per process and per group.
#include "record/process_sampler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace wattlab {

ProcessSampler::ProcessSampler(std::vector<Sensor*> sensors, const Meter* meter, Clock& clock,
                               ProcessSamplerOptions options)
    : meter_(meter), clock_(clock), opt_(std::move(options)) {
  if (opt_.interval_ns <= 0) throw UsageError("process sampler: the poll interval must be > 0");
  for (Sensor* s : sensors) {
    if (!s) continue;
    for (std::size_t i = 0; i < s->domains().size(); ++i) {
      if (!s->reports_processes(i)) continue;
      Gpu g;
      g.sensor = s;
      g.domain_index = i;
      g.id = s->domains()[i].id;
      if (meter_)
        for (std::size_t m = 0; m < meter_->domains().size(); ++m)
          if (meter_->domains()[m].id == g.id) g.meter_index = m;
      gpus_.push_back(std::move(g));
    }
  }
}

ProcessSampler::~ProcessSampler() { stop(); }

std::vector<std::string> ProcessSampler::gpu_ids() const {
  std::vector<std::string> ids;
  for (const auto& g : gpus_) ids.push_back(g.id);
  return ids;
}

const ProcessSampler::Gpu* ProcessSampler::find(const std::string& id) const {
  for (const auto& g : gpus_)
    if (g.id == id) return &g;
  return nullptr;
}

int64_t ProcessSampler::sample_period_ns(const Gpu& g) {
  // The lower quartile of the spacings between a process's successive samples: the driver's
  // sample period. A process that skips periods (zero utilization) adds multiples of it, and
  // jitter spreads it both ways; the lower quartile sits on the period unless most spacings are
  // skips. Before any: the shortest period NVML documents (1/6 s).
  if (g.spacings_ns.empty()) return 166'666'667;
  std::vector<int64_t> v(g.spacings_ns.begin(), g.spacings_ns.end());
  const auto q = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 4);
  std::nth_element(v.begin(), q, v.end());
  return *q;
}

void ProcessSampler::add_samples(Gpu& g, const std::vector<ProcessUsage>& list) {
  for (const auto& u : list) g.sample_history = g.sample_history || u.sm_samples.size() >= 2;
  for (const auto& u : list)
    for (const auto& x : u.sm_samples) {
      auto last = g.last_sample_t_ns.find(u.pid);
      if (last != g.last_sample_t_ns.end()) {
        if (x.t_ns <= last->second) continue;  // not newer than one already kept
        const int64_t spacing = x.t_ns - last->second;
        if (spacing >= 1'000'000 && spacing <= kMaxSamplePeriodNs) {
          g.spacings_ns.push_back(spacing);
          if (g.spacings_ns.size() > 64) g.spacings_ns.pop_front();
        }
      }
      // From a history of samples, a sample stands for its own period, never more: where the
      // process skipped periods (zero utilization, so no sample), that time counts nothing. A
      // driver that keeps only each process's newest row (the H100's, measured) updates it with
      // the process's average since its previous update, one process at a time, so a row stands
      // for the time since that process's previous row, up to kMaxRowSpanNs.
      const int64_t period = sample_period_ns(g);
      int64_t begin = x.t_ns - period;
      if (last != g.last_sample_t_ns.end())
        begin = g.sample_history ? std::max(last->second, begin) : std::max(last->second, x.t_ns - kMaxRowSpanNs);
      g.samples.push_back(SmSample{u.pid, begin, x.t_ns, x.sm_util_pct});
      g.last_sample_t_ns[u.pid] = x.t_ns;
    }
}

void ProcessSampler::poll() {
  const int64_t t = clock_.now_ns();
  std::optional<MeterSnapshot> snap;
  if (meter_) snap = meter_->snapshot();
  for (auto& g : gpus_) {
    Status st;
    const std::vector<ProcessUsage> list = g.sensor->processes(g.domain_index, &st);
    ProcessPoll p;
    p.t_ns = t;
    for (const auto& u : list) p.pids.insert(u.pid);  // listed; without a sample it had no SM time
    // Labels of new processes, read while they are alive (outside the lock: file reads).
    std::vector<unsigned> new_pids;
    {
      std::lock_guard lk(mu_);
      for (const auto& u : list)
        if (!seen_.count(u.pid)) new_pids.push_back(u.pid);
    }
    std::vector<SeenProcess> fresh;
    for (unsigned pid : new_pids) {
      SeenProcess sp;
      sp.info = read_proc_info(pid, opt_.proc_root).value_or(ProcInfo{pid, 0, "", "", {}});
      sp.in_tree = opt_.tree_root_pid != 0 && descends_from(pid, opt_.tree_root_pid, opt_.proc_root);
      sp.first_t_ns = t;
      fresh.push_back(std::move(sp));
    }
    std::lock_guard lk(mu_);
    for (auto& sp : fresh) seen_.emplace(sp.info.pid, std::move(sp));
    for (const auto& u : list) seen_[u.pid].last_t_ns = t;
    if (!st.ok() && g.error.empty()) g.error = st.error().message();
    // The idle floor: the meter's energy between two polls that both saw no process on this GPU.
    if (snap && g.meter_index && *g.meter_index < snap->domains.size()) {
      const DomainLive& d = snap->domains[*g.meter_index];
      if (d.energy_ok) {
        const double dt_s = static_cast<double>(d.energy_t_ns - g.last_energy_t_ns) * 1e-9;
        if (g.have_energy && g.last_empty && list.empty() && st.ok() && dt_s >= 0.1)
          g.floor.emplace_back(dt_s, (d.energy_j - g.last_energy_j) / dt_s);
        g.last_energy_t_ns = d.energy_t_ns;
        g.last_energy_j = d.energy_j;
        g.have_energy = true;
      }
    }
    g.last_empty = list.empty() && st.ok();
    if (g.floor.size() > 600) g.floor.erase(g.floor.begin());  // the newest 600 intervals make the floor
    g.polls.push_back(std::move(p));
    add_samples(g, list);
    if (st.ok()) {
      // Complete up to the oldest newest sample of the processes still publishing: a process's
      // next sample may still cover the time after its newest, back one sample period from a
      // history of samples, back to that newest row (up to kMaxRowSpanNs) from newest rows.
      const int64_t reach_ns = g.sample_history ? kMaxSamplePeriodNs : kMaxRowSpanNs;
      int64_t until = t;
      for (const auto& [pid, t_ns] : g.last_sample_t_ns)
        if (t_ns >= t - reach_ns) until = std::min(until, t_ns);
      g.samples_until_ns = std::max({g.samples_until_ns, until, t - reach_ns});
    }
    if (opt_.keep_ns > 0) {
      while (g.polls.size() > 2 && g.polls.front().t_ns < t - opt_.keep_ns) g.polls.erase(g.polls.begin());
      std::erase_if(g.samples, [&](const SmSample& x) { return x.t_end_ns < t - opt_.keep_ns; });
      std::erase_if(g.last_sample_t_ns, [&](const auto& kv) { return kv.second < t - opt_.keep_ns; });
    }
  }
  if (opt_.keep_ns > 0) {
    std::lock_guard lk(mu_);
    std::erase_if(seen_, [&](const auto& kv) { return kv.second.last_t_ns < t - opt_.keep_ns; });
  }
  if (opt_.after_poll) opt_.after_poll(t);
}

void ProcessSampler::start() {
  if (thread_.joinable() || gpus_.empty()) return;
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void ProcessSampler::run() {
  std::unique_lock lk(run_mu_);
  while (!stopping_) {
    lk.unlock();
    poll();
    lk.lock();
    cv_.wait_for(lk, std::chrono::nanoseconds(opt_.interval_ns), [this] { return stopping_; });
  }
}

void ProcessSampler::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lk(run_mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
  poll();
}

std::optional<IdleFloor> ProcessSampler::idle_floor(const std::string& gpu_id) const {
  std::lock_guard lk(mu_);
  const Gpu* g = find(gpu_id);
  if (!g || g->floor.size() < 2) return std::nullopt;
  IdleFloor f;
  f.intervals = g->floor.size();
  double e = 0;
  for (const auto& [dt, w] : g->floor) {
    f.duration_s += dt;
    e += dt * w;
  }
  f.power_w = e / f.duration_s;
  double ss = 0;
  for (const auto& [dt, w] : g->floor) ss += (w - f.power_w) * (w - f.power_w);
  f.u95_w = 2 * std::sqrt(ss / static_cast<double>(f.intervals - 1));
  return f;
}

std::map<unsigned, SeenProcess> ProcessSampler::seen() const {
  std::lock_guard lk(mu_);
  return seen_;
}

bool ProcessSampler::saw_processes(const std::string& gpu_id, int64_t t0_ns, int64_t t1_ns) const {
  std::lock_guard lk(mu_);
  const Gpu* g = find(gpu_id);
  if (!g) return false;
  for (std::size_t k = 0; k < g->polls.size(); ++k) {
    const int64_t from = k > 0 ? g->polls[k - 1].t_ns : g->polls[k].t_ns - 2 * opt_.interval_ns;
    if (g->polls[k].t_ns >= t0_ns && from <= t1_ns && !g->polls[k].pids.empty()) return true;
  }
  return false;
}

int64_t ProcessSampler::samples_until_ns(const std::string& gpu_id) const {
  std::lock_guard lk(mu_);
  const Gpu* g = find(gpu_id);
  return g ? g->samples_until_ns : INT64_MIN;
}

std::map<std::string, std::string> ProcessSampler::errors() const {
  std::lock_guard lk(mu_);
  std::map<std::string, std::string> out;
  for (const auto& g : gpus_)
    if (!g.error.empty()) out[g.id] = g.error;
  return out;
}

GpuAttribution ProcessSampler::attribute(const std::string& gpu_id, int64_t t0_ns, int64_t t1_ns, double energy_j,
                                         double uncertainty_j, std::optional<double> device_busy_pct) const {
  const std::optional<IdleFloor> floor = idle_floor(gpu_id);
  SplitInput in;
  in.t_begin_ns = t0_ns;
  in.t_end_ns = t1_ns;
  in.energy_j = energy_j;
  in.uncertainty_j = uncertainty_j;
  in.device_busy_pct = device_busy_pct;
  in.max_hold_ns = 2 * opt_.interval_ns;
  in.proxy_rel_u95 = opt_.proxy_rel_u95;
  if (opt_.idle_power_w) {
    in.idle_power_w = opt_.idle_power_w;
    in.idle_power_u95_w = opt_.idle_power_u95_w;
    in.idle_source = "--idle-power-w";
  } else if (floor) {
    in.idle_power_w = floor->power_w;
    in.idle_power_u95_w = floor->u95_w;
    in.idle_source = fmt::format("measured floor: {} intervals with no process on the GPU, {:.1f} s", floor->intervals,
                                 floor->duration_s);
  }
  std::map<unsigned, SeenProcess> seen;
  {
    std::lock_guard lk(mu_);
    const Gpu* g = find(gpu_id);
    if (!g) throw UsageError("process split: " + gpu_id + " reports no processes");
    // From the last poll before t0 (it bounds the next one's span) to the first at or after t1.
    for (std::size_t k = 0; k < g->polls.size(); ++k) {
      const bool next_reaches = k + 1 < g->polls.size() && g->polls[k + 1].t_ns >= t0_ns;
      const bool prev_before_end = k == 0 || g->polls[k - 1].t_ns < t1_ns;
      if ((g->polls[k].t_ns >= t0_ns || next_reaches) && prev_before_end) in.polls.push_back(g->polls[k]);
    }
    for (const auto& x : g->samples)
      if (x.t_end_ns > t0_ns && x.t_begin_ns < t1_ns) in.samples.push_back(x);
    seen = seen_;
  }
  GpuAttribution a;
  a.gpu_id = gpu_id;
  a.split = split_energy(in);
  for (const auto& s : a.split.processes) {
    ProcessRow r;
    r.pid = s.pid;
    r.share = s;
    if (auto it = seen.find(s.pid); it != seen.end()) {
      r.comm = it->second.info.comm;
      r.ids = it->second.info.ids;
      r.in_tree = it->second.in_tree;
    }
    a.rows.push_back(std::move(r));
  }
  if (opt_.tree_root_pid != 0) {
    // The same model over two pseudo-processes, so each group's uncertainty is its own, not a sum.
    SplitInput grouped = in;
    auto group_of = [&](unsigned pid) {
      auto it = seen.find(pid);
      return it != seen.end() && it->second.in_tree ? 1u : 2u;
    };
    for (auto& p : grouped.polls) {
      std::set<unsigned> g;
      for (unsigned pid : p.pids) g.insert(group_of(pid));
      p.pids = std::move(g);
    }
    for (auto& x : grouped.samples) x.pid = group_of(x.pid);
    const ProcessSplit gs = split_energy(grouped);
    for (const auto& s : gs.processes) (s.pid == 1 ? a.tree : a.others) = s;
  }
  return a;
}

}  // namespace wattlab

// Readings that ride along with another's read (ReadingModel::read_with: NVML's GPM metrics come
// from one pair of samples), and the capped shares a short window takes from the clock-event
// reasons. A scripted sensor on virtual time logs every read the meter makes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "wattlab/meter/meter.h"

namespace wattlab {
namespace {

using K = ReadingKind;

struct ReadLog {
  std::size_t domain;
  K kind;
  int64_t t_ns;
};

class ScriptedGpu final : public Sensor {
 public:
  // Domain 0: power, reasons, both violation counters, the GPM lead and two riders. Domain 1: a
  // rider whose lead it lacks (keeps its own schedule).
  ScriptedGpu(Clock& clock, uint64_t reasons) : clock_(clock), reasons_(reasons) {
    Domain d0;
    d0.id = "gpu:0";
    d0.scope = "gpu";
    for (K k : {K::power_instant_w, K::clock_event_reasons, K::power_violation_ns, K::thermal_violation_ns,
                K::gpm_sm_activity_pct, K::gpm_sm_occupancy_pct, K::gpm_tensor_activity_pct})
      d0.model.readings.push_back(model(k));
    d0.model.readings[5].read_with = K::gpm_sm_activity_pct;
    d0.model.readings[6].read_with = K::gpm_sm_activity_pct;
    Domain d1;
    d1.id = "gpu:1";
    d1.scope = "gpu";
    d1.model.readings = {model(K::power_instant_w), model(K::gpm_sm_occupancy_pct)};
    d1.model.readings[1].read_with = K::gpm_sm_activity_pct;
    domains_ = {d0, d1};
  }
  std::string backend() const override { return "scripted"; }
  const std::vector<Domain>& domains() const override { return domains_; }
  Status read(std::size_t d, K kind, std::vector<Reading>& out) override {
    // The lead does the dear work (1 ms: its budget stretches it to ~2 reads/s); riders are free.
    if (kind == K::gpm_sm_activity_pct) clock_.spend_ns(1'000'000);
    const int64_t t = clock_.now_ns();
    log.push_back({d, kind, t});
    if (kind == K::gpm_sm_activity_pct && fail_lead)
      return Error{ErrorKind::not_supported, "scripted: the lead metric fails", {}, 0};
    Reading r;
    r.t_ns = t;
    r.kind = kind;
    switch (kind) {
      case K::power_instant_w: r.value = 100; break;
      case K::clock_event_reasons: r.value = static_cast<double>(reasons_); break;
      case K::power_violation_ns:
      case K::thermal_violation_ns: r.value = static_cast<double>(t); break;  // always held
      default: r.value = 50; break;
    }
    out.push_back(r);
    return {};
  }

  std::vector<ReadLog> log;
  bool fail_lead = false;

 private:
  static ReadingModel model(K k) {
    ReadingModel m;
    m.kind = k;
    m.update_period_ns = k == K::power_instant_w ? 100'000'000 : 0;
    return m;
  }
  Clock& clock_;
  uint64_t reasons_;
  std::vector<Domain> domains_;
};

struct Rig {
  VirtualClock clock{1'000'000'000};
  ScriptedGpu* gpu = nullptr;
  std::unique_ptr<Meter> meter;
  explicit Rig(uint64_t reasons) {
    auto g = std::make_unique<ScriptedGpu>(clock, reasons);
    gpu = g.get();
    std::vector<SensorPtr> s;
    s.push_back(std::move(g));
    meter = std::make_unique<Meter>(std::move(s), clock);
  }
  std::size_t reads(std::size_t d, K k) const {
    std::size_t n = 0;
    for (const auto& r : gpu->log) n += r.domain == d && r.kind == k;
    return n;
  }
};

TEST(MeterRideAlong, RidersAreReadRightAfterTheirLeadAndNeverAlone) {
  Rig rig(0);
  rig.meter->advance_to(rig.clock.now_ns() + 5'000'000'000);
  const auto& log = rig.gpu->log;
  const std::size_t leads = rig.reads(0, K::gpm_sm_activity_pct);
  ASSERT_GT(leads, 5u);
  EXPECT_EQ(rig.reads(0, K::gpm_sm_occupancy_pct), leads);
  EXPECT_EQ(rig.reads(0, K::gpm_tensor_activity_pct), leads);
  for (std::size_t i = 0; i < log.size(); ++i) {
    if (log[i].domain != 0 || log[i].kind != K::gpm_sm_activity_pct) continue;
    ASSERT_LT(i + 2, log.size());
    EXPECT_EQ(log[i + 1].kind, K::gpm_sm_occupancy_pct);
    EXPECT_EQ(log[i + 2].kind, K::gpm_tensor_activity_pct);
    EXPECT_EQ(log[i + 2].t_ns, log[i].t_ns);  // the riders cost nothing
  }
  // A rider whose domain lacks the lead keeps a schedule of its own.
  EXPECT_GT(rig.reads(1, K::gpm_sm_occupancy_pct), 10u);
  const MeterSnapshot snap = rig.meter->snapshot();
  EXPECT_EQ(snap.domains[0].health(K::gpm_tensor_activity_pct).reads_ok, leads);
  ASSERT_TRUE(snap.domains[0].health(K::gpm_tensor_activity_pct).latest.has_value());
  EXPECT_EQ(snap.domains[0].health(K::gpm_tensor_activity_pct).latest->kind, K::gpm_tensor_activity_pct);
}

TEST(MeterRideAlong, RidersStillCountWhenTheLeadFails) {
  Rig rig(0);
  rig.gpu->fail_lead = true;
  const int64_t a = rig.clock.now_ns() + 1'000'000'000;
  const int64_t b = a + 3'000'000'000;
  rig.meter->advance_to(b + 1'000'000'000);
  const MeterSnapshot snap = rig.meter->snapshot();
  EXPECT_GT(snap.domains[0].health(K::gpm_sm_activity_pct).read_errors, 5u);
  EXPECT_EQ(snap.domains[0].health(K::gpm_sm_activity_pct).reads_ok, 0u);
  EXPECT_EQ(snap.domains[0].health(K::gpm_sm_occupancy_pct).reads_ok,
            snap.domains[0].health(K::gpm_sm_activity_pct).read_errors);
  const WindowResult r = rig.meter->estimate(a, b);
  const TelemetrySummary& t = r.domains.at(0).telemetry;
  EXPECT_FALSE(t.mean_sm_activity_pct.has_value());
  ASSERT_TRUE(t.mean_sm_occupancy_pct.has_value());
  EXPECT_DOUBLE_EQ(*t.mean_sm_occupancy_pct, 50.0);
}

TEST(MeterRideAlong, ShortWindowsTakeBothCappedSharesFromTheReasons) {
  // 0.6 s holds at most one read of each violation counter (every 1 s): both shares come from the
  // reasons, one note names both. A 5 s window keeps the counters' slopes and no note.
  Rig rig(kClockEventSwPowerCap | kClockEventSwThermal);
  const int64_t a = rig.clock.now_ns() + 2'200'000'000;
  rig.meter->advance_to(a + 8'000'000'000);
  const DomainEnergy s = rig.meter->estimate(a, a + 600'000'000).domains.at(0);
  ASSERT_TRUE(s.telemetry.power_capped_fraction.has_value());
  ASSERT_TRUE(s.telemetry.thermal_capped_fraction.has_value());
  EXPECT_EQ(*s.telemetry.power_capped_fraction, 1.0);
  EXPECT_EQ(*s.telemetry.thermal_capped_fraction, 1.0);
  std::string note;
  for (const auto& i : s.issues)
    if (i.find("clock-event reason") != std::string::npos) note = i;
  EXPECT_NE(note.find("power-capped share"), std::string::npos) << note;
  EXPECT_NE(note.find("thermally capped share"), std::string::npos) << note;
  const DomainEnergy l = rig.meter->estimate(a, a + 5'000'000'000).domains.at(0);
  for (const auto& i : l.issues) EXPECT_EQ(i.find("clock-event reason"), std::string::npos) << i;
  ASSERT_TRUE(l.telemetry.thermal_capped_fraction.has_value());
  EXPECT_NEAR(*l.telemetry.thermal_capped_fraction, 1.0, 1e-9);

  // Power cap only: the thermal share from the reasons is 0, not absent.
  Rig cap(kClockEventSwPowerCap);
  cap.meter->advance_to(a + 2'000'000'000);
  const DomainEnergy c = cap.meter->estimate(a, a + 600'000'000).domains.at(0);
  ASSERT_TRUE(c.telemetry.thermal_capped_fraction.has_value());
  EXPECT_EQ(*c.telemetry.thermal_capped_fraction, 0.0);
}

}  // namespace
}  // namespace wattlab

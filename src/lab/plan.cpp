#include "lab/plan.h"

#include "core/splitmix.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

namespace wattlab::lab {
namespace {

// Fisher-Yates with our own generator: the same order on every standard library.
template <class T>
void seeded_shuffle(std::vector<T>& v, uint64_t seed) {
  uint64_t state = splitmix64(seed);
  for (std::size_t i = v.size(); i > 1; --i) {
    state = splitmix64(state);
    const std::size_t j = static_cast<std::size_t>(state % i);
    std::swap(v[i - 1], v[j]);
  }
}

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

Result<int64_t> parse_dim(std::string_view t, std::string_view whole) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || p != t.data() + t.size() || v <= 0 || v > (1 << 20))
    return Error{ErrorKind::invalid_argument, fmt::format("shape '{}': '{}' is not a dimension in 1..1048576", whole, t),
                 "give N (N x N x N) or MxNxK, e.g. 8192 or 8192x8192x28672"};
  return v;
}

std::string describe(const GemmSpec& s, const std::string& engine_label) {
  return fmt::format("{}|{}x{}x{}|{}|{}|{}|{}|{}|{}|{}{}", engine_label, s.m, s.n, s.k, s.recipe_a, s.recipe_b, s.seed,
                     static_cast<int>(s.control), s.rest_bytes, s.fill_byte, s.toggle_bits,
                     s.hold_context ? "" : "|nocontext");
}

GemmSpec make_spec(const SweepValue& v, Engine e, const Shape& sh, uint64_t seed) {
  GemmSpec s;
  s.engine = e;
  s.m = sh.m;
  s.n = sh.n;
  s.k = sh.k;
  s.recipe_a = v.recipe_a;
  s.recipe_b = v.recipe_b;
  s.seed = seed;
  s.control = v.control;
  s.rest_bytes = v.rest_bytes;
  s.fill_byte = v.fill_byte;
  s.toggle_bits = v.toggle_bits;
  s.hold_context = v.hold_context;
  return s;
}

}  // namespace

Result<Shape> parse_shape(std::string_view text) {
  std::vector<int64_t> dims;
  std::size_t pos = 0;
  while (true) {
    const std::size_t x = text.find('x', pos);
    auto d = parse_dim(text.substr(pos, x == std::string_view::npos ? std::string_view::npos : x - pos), text);
    if (!d) return d.error();
    dims.push_back(*d);
    if (x == std::string_view::npos) break;
    pos = x + 1;
  }
  if (dims.size() == 1) return Shape{dims[0], dims[0], dims[0]};
  if (dims.size() == 3) return Shape{dims[0], dims[1], dims[2]};
  return Error{ErrorKind::invalid_argument, fmt::format("shape '{}' has {} dimensions", text, dims.size()),
               "give N or MxNxK"};
}

Result<std::vector<Shape>> parse_shape_list(std::string_view list) {
  std::vector<Shape> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t c = list.find(',', pos);
    auto s = parse_shape(list.substr(pos, c == std::string_view::npos ? std::string_view::npos : c - pos));
    if (!s) return s.error();
    out.push_back(*s);
    if (c == std::string_view::npos) break;
    pos = c + 1;
  }
  return out;
}

std::string to_string(const Shape& s) { return fmt::format("{}x{}x{}", s.m, s.n, s.k); }

std::vector<SweepValue> thin_values(const std::vector<SweepValue>& values, int n) {
  if (n <= 0 || values.size() <= static_cast<std::size_t>(n)) return values;
  if (n == 1) return {values.front()};
  std::vector<SweepValue> out;
  const double step = static_cast<double>(values.size() - 1) / static_cast<double>(n - 1);
  std::size_t last = values.size();
  for (int i = 0; i < n; ++i) {
    const auto j = static_cast<std::size_t>(std::llround(step * i));
    if (j != last) out.push_back(values[j]);
    last = j;
  }
  return out;
}

Result<SweepPlan> make_plan(const PlanRequest& req) {
  if (req.experiments.empty()) return Error{ErrorKind::invalid_argument, "no experiment given", "e.g. --experiment E3"};
  if (req.seeds.empty()) return Error{ErrorKind::invalid_argument, "no seed given", "e.g. --seeds 1,2,3"};
  if (req.reference_every < 1)
    return Error{ErrorKind::invalid_argument, fmt::format("reference interval {} must be >= 1", req.reference_every), ""};
  // Validate everything first: a bad sweep fails before any GPU time is spent.
  bool any_gemm = false, any_control = false;
  for (const auto& x : req.experiments) {
    auto sw = study_sweep(x, req.engines.empty() ? Engine::bf16 : req.engines.front(), req);
    if (!sw) return sw.error();
    (sw->control ? any_control : any_gemm) = true;
  }
  if (any_gemm && (req.engines.empty() || req.shapes.empty()))
    return Error{ErrorKind::invalid_argument, "GEMM experiments need at least one engine and one shape",
                 "e.g. --engines bf16 --shapes 2048"};
  for (Engine e : req.engines)
    for (const auto& sh : req.shapes)
      if (auto why = shape_problem(e, sh.m, sh.n, sh.k)) return Error{ErrorKind::invalid_argument, *why, ""};

  struct Block {
    std::string label;
    Engine engine = Engine::bf16;
    Shape shape;
    bool control = false;
  };
  SweepPlan plan;
  std::string canon = req.id_salt;
  for (uint64_t seed : req.seeds) {
    std::vector<Block> blocks;
    if (any_gemm)
      for (const auto& sh : req.shapes)
        for (Engine e : req.engines) blocks.push_back({std::string(to_string(e)), e, sh, false});
    if (any_control) blocks.push_back({"control", Engine::bf16, Shape{}, true});
    seeded_shuffle(blocks, req.order_seed * 1000003ULL + seed);
    for (std::size_t bi = 0; bi < blocks.size(); ++bi) {
      const Block& b = blocks[bi];
      std::vector<PlannedPoint> pts;
      for (const auto& x : req.experiments) {
        auto sw = study_sweep(x, b.engine, req);
        if (!sw) return sw.error();
        if (sw->control != b.control) continue;
        for (const auto& v : thin_values(sw->values, req.max_values)) {
          PlannedPoint p;
          p.spec = make_spec(v, b.engine, b.shape, seed);
          p.experiment = sw->id;
          p.param = sw->param;
          p.param_value = v.value;
          p.engine_label = b.label;
          pts.push_back(std::move(p));
        }
      }
      if (pts.empty()) continue;
      seeded_shuffle(pts, splitmix64(req.order_seed) ^ (seed * 7919ULL + bi + 1));
      SweepValue rv;
      if (b.control) {
        rv.value = "idle";
        rv.control = Control::idle;
      } else {
        auto r = reference_value(b.engine);
        if (!r) return r.error();
        rv = *r;
      }
      PlannedPoint ref;
      ref.spec = make_spec(rv, b.engine, b.shape, seed);
      ref.experiment = "ref";
      ref.param = "reference";
      ref.param_value = rv.value;
      ref.reference = true;
      ref.engine_label = b.label;
      const std::size_t every = static_cast<std::size_t>(req.reference_every);
      for (std::size_t i = 0; i < pts.size(); ++i) {
        if (i % every == 0) plan.points.push_back(ref);
        plan.points.push_back(pts[i]);
      }
      plan.points.push_back(ref);
    }
  }
  for (std::size_t i = 0; i < plan.points.size(); ++i) {
    auto& p = plan.points[i];
    p.index = static_cast<int>(i);
    canon += "\n" + p.experiment + "|" + p.param_value + "|" + describe(p.spec, p.engine_label);
  }
  plan.sweep_id = fmt::format("{:016x}", fnv1a(canon));
  return plan;
}

double estimate_plan_s(const SweepPlan& plan, const TimeModel& m, std::size_t skip) {
  double t = 0;
  for (std::size_t i = skip; i < plan.points.size(); ++i)
    t += m.prepare_s + m.window_s + (i == skip ? std::max(m.first_warmup_s, m.warmup_s) : m.warmup_s);
  return t;
}

Result<SweepPlan> single_point_plan(const GemmSpec& spec) {
  auto ref = reference_value(spec.engine);
  if (!ref) return ref.error();
  PlannedPoint p;
  p.spec = spec;
  p.experiment = "run";
  p.reference = spec.recipe_a == ref->recipe_a && spec.recipe_b == ref->recipe_b;
  p.param = "recipe";
  p.param_value = p.reference ? "baseline" : "custom";
  p.engine_label = std::string(to_string(spec.engine));
  SweepPlan plan;
  plan.points.push_back(std::move(p));
  return plan;
}

}  // namespace wattlab::lab

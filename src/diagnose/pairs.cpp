#include "diagnose/pairs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "diagnose/min_energy.h"

namespace wattlab::diagnose {

double Pair::energy_change() const { return b->energy_per_unit_j() / a->energy_per_unit_j() - 1.0; }
double Pair::latency_change() const { return b->latency_ms() / a->latency_ms() - 1.0; }

PairStats stats_of(std::string label, std::vector<Pair> pairs) {
  PairStats s;
  s.label = std::move(label);
  s.n = pairs.size();
  if (!pairs.empty()) {
    std::vector<double> de, dl;
    for (const auto& p : pairs) {
      de.push_back(p.energy_change());
      dl.push_back(p.latency_change());
      if (p.b->energy_per_unit_j() < p.a->energy_per_unit_j()) ++s.b_wins_energy;
      if (p.b->latency_ms() < p.a->latency_ms()) ++s.b_wins_latency;
    }
    s.median_energy_change = median_of(de);
    s.min_energy_change = *std::min_element(de.begin(), de.end());
    s.max_energy_change = *std::max_element(de.begin(), de.end());
    s.median_latency_change = median_of(dl);
  }
  s.pairs = std::move(pairs);
  return s;
}

PairStats compare_gpus(const Rows& rows, const std::string& gpu_a, const std::string& gpu_b,
                       double deadline_ms, int min_batch) {
  Filter fa, fb;
  fa.gpu_model = gpu_a;
  fb.gpu_model = gpu_b;
  fa.deadline_ms = fb.deadline_ms = deadline_ms;
  fa.min_batch = fb.min_batch = min_batch;
  const Rows ma = min_energy_per_model(rows, fa), mb = min_energy_per_model(rows, fb);
  std::vector<Pair> pairs;
  for (const auto* a : ma)
    for (const auto* b : mb)
      if (a->task == b->task && a->model_id == b->model_id)
        pairs.push_back({a, b, fmt::format("deadline {:g} ms", deadline_ms)});
  return stats_of(fmt::format("{} vs {} at {} <= {:g} ms", gpu_b, gpu_a,
                              ma.empty() ? "latency" : ma.front()->latency_name(), deadline_ms),
                  std::move(pairs));
}

std::string bf16_sibling_id(const std::string& model_id) {
  static const std::string kSuffix = "-FP8";
  if (model_id.size() > kSuffix.size() &&
      model_id.compare(model_id.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0)
    return model_id.substr(0, model_id.size() - kSuffix.size());
  return {};
}

PairStats compare_fp8_bf16(const Rows& rows, int batch_lo, int batch_hi) {
  std::map<std::tuple<std::string, std::string, std::string, int, int>, const ConfigRecord*> bf16;
  for (const auto* r : rows) bf16[{r->task, r->model_id, r->gpu_model, r->num_gpus, r->batch()}] = r;
  std::vector<Pair> pairs;
  for (const auto* r : rows) {
    const std::string sib = bf16_sibling_id(r->model_id);
    if (sib.empty() || r->batch() < batch_lo || r->batch() > batch_hi) continue;
    auto it = bf16.find({r->task, sib, r->gpu_model, r->num_gpus, r->batch()});
    if (it != bf16.end()) pairs.push_back({it->second, r, fmt::format("batch {}", r->batch())});
  }
  return stats_of(fmt::format("FP8 vs BF16 at batch {}-{}", batch_lo, batch_hi), std::move(pairs));
}

PairStats compare_gpu_counts(const Rows& rows) {
  std::map<std::tuple<std::string, std::string, std::string, int>, std::map<int, const ConfigRecord*>> groups;
  for (const auto* r : rows) {
    auto& slot = groups[{r->task, r->model_id, r->gpu_model, r->batch()}][r->num_gpus];
    if (!slot || r->energy_per_unit_j() < slot->energy_per_unit_j()) slot = r;
  }
  std::vector<Pair> pairs;
  for (const auto& [k, by_n] : groups)
    for (auto i = by_n.begin(); i != by_n.end(); ++i)
      for (auto j = std::next(i); j != by_n.end(); ++j)
        pairs.push_back({i->second, j->second, fmt::format("batch {}, {} vs {} GPUs", std::get<3>(k), j->first, i->first)});
  return stats_of("more GPUs vs fewer at equal batch", std::move(pairs));
}

namespace {
std::string org_of(const std::string& id) { return id.substr(0, id.find('/')); }
bool is_moe(const ConfigRecord& r) { return r.architecture == "MoE"; }
bool is_dense(const ConfigRecord& r) { return r.architecture == "Dense Transformer"; }
}  // namespace

PairStats compare_moe_dense(const Rows& rows, const std::string& gpu_model) {
  Filter f;
  f.gpu_model = gpu_model;
  const Rows minima = min_energy_per_model(rows, f);
  std::vector<Pair> pairs;
  for (const auto* moe : minima) {
    if (!is_moe(*moe) || !bf16_sibling_id(moe->model_id).empty()) continue;
    const ConfigRecord* best = nullptr;
    for (const auto* d : minima) {
      if (!is_dense(*d) || d->task != moe->task || org_of(d->model_id) != org_of(moe->model_id)) continue;
      const double gap = std::abs(std::log(d->total_params_billions / moe->total_params_billions));
      if (!best || gap < std::abs(std::log(best->total_params_billions / moe->total_params_billions))) best = d;
    }
    if (best) pairs.push_back({best, moe, fmt::format("{}: {} vs {}", moe->task, moe->nickname, best->nickname)});
  }
  return stats_of(fmt::format("MoE vs dense of similar total size, minimum energy on {}", gpu_model), std::move(pairs));
}

PairStats compare_models(const Rows& rows, const std::string& model_a, const std::string& model_b,
                         const std::string& gpu_model) {
  Filter f;
  f.gpu_model = gpu_model;
  const Rows minima = min_energy_per_model(rows, f);
  std::vector<Pair> pairs;
  for (const auto* a : minima)
    for (const auto* b : minima)
      if (a->model_id == model_a && b->model_id == model_b && a->task == b->task)
        pairs.push_back({a, b, a->task});
  return stats_of(fmt::format("{} vs {} on {}", model_b, model_a, gpu_model), std::move(pairs));
}

}  // namespace wattlab::diagnose

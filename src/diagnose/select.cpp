#include "diagnose/select.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

#include "wattlab/core/error.h"

namespace wattlab::diagnose {
namespace {

const std::vector<std::string>& keys() {
  static const std::vector<std::string> k{"model", "task", "gpu", "gpus", "batch", "precision", "tp",
                                          "ep", "steps", "ulysses", "ring", "row", "pick"};
  return k;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

long parse_int(const Selector& s, const std::string& key, const std::string& v) {
  long x = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc{} || p != v.data() + v.size())
    throw UsageError(fmt::format("selector '{}': {}={} is not an integer", s.text, key, v));
  return x;
}

// The model ids `value` names: exact id or nickname, else the ids containing it.
std::set<std::string> models_named(const std::string& value, const Rows& rows) {
  const std::string v = lower(value);
  std::set<std::string> exact, partial;
  for (const auto* r : rows) {
    const std::string id = lower(r->model_id), nick = lower(r->nickname);
    if (id == v || nick == v) exact.insert(r->model_id);
    else if (id.find(v) != std::string::npos || nick.find(v) != std::string::npos) partial.insert(r->model_id);
  }
  return exact.empty() ? partial : exact;
}

std::string precision_alias(std::string v) {
  v = lower(v);
  if (v == "bf16") return "bfloat16";
  return v;
}

bool term_matches(const Selector& s, const std::string& key, const std::string& value,
                  const std::set<std::string>& model_ids, const ConfigRecord& r) {
  if (key == "model") return model_ids.count(r.model_id) > 0;
  if (key == "task") return lower(r.task) == lower(value);
  if (key == "gpu") return lower(r.gpu_model) == lower(value);
  if (key == "gpus") return r.num_gpus == parse_int(s, key, value);
  if (key == "batch") return r.batch() == parse_int(s, key, value);
  if (key == "precision") return lower(r.weight_precision) == precision_alias(value);
  if (key == "tp") return r.llm && r.llm->tensor_parallel == parse_int(s, key, value);
  if (key == "ep") return r.llm && r.llm->expert_parallel == parse_int(s, key, value);
  if (key == "steps") return r.diffusion && r.diffusion->inference_steps == parse_int(s, key, value);
  if (key == "ulysses") return r.diffusion && r.diffusion->ulysses_degree == parse_int(s, key, value);
  if (key == "ring") return r.diffusion && r.diffusion->ring_degree == parse_int(s, key, value);
  if (key == "row") return static_cast<long>(r.row_index) == parse_int(s, key, value);
  return true;  // pick
}

}  // namespace

Selector parse_selector(std::string_view text) {
  Selector s;
  s.text = std::string(text);
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string term = trim(text.substr(pos, comma - pos));
    pos = comma + 1;
    if (term.empty()) {
      if (comma >= text.size()) break;
      continue;
    }
    const auto eq = term.find('=');
    if (eq == std::string::npos)
      throw UsageError(fmt::format("selector '{}': term '{}' is not key=value (keys: {})", s.text, term,
                                   fmt::join(keys(), ", ")));
    std::string key = lower(trim(term.substr(0, eq))), value = trim(term.substr(eq + 1));
    if (std::find(keys().begin(), keys().end(), key) == keys().end())
      throw UsageError(fmt::format("selector '{}': unknown key '{}' (keys: {})", s.text, key, fmt::join(keys(), ", ")));
    if (value.empty()) throw UsageError(fmt::format("selector '{}': key '{}' has no value", s.text, key));
    if (key == "pick" && value != "min-energy" && value != "min-latency")
      throw UsageError(fmt::format("selector '{}': pick={} (accepted: min-energy, min-latency)", s.text, value));
    s.terms.emplace_back(std::move(key), std::move(value));
  }
  if (s.terms.empty()) throw UsageError(fmt::format("selector '{}' is empty (e.g. model=Qwen/Qwen3-8B,gpu=B200,gpus=1,batch=64)", s.text));
  return s;
}

Rows match(const Selector& s, const Rows& rows) {
  std::set<std::string> ids;
  for (const auto& [k, v] : s.terms)
    if (k == "model") ids = models_named(v, rows);
  Rows out;
  for (const auto* r : rows) {
    bool ok = true;
    for (const auto& [k, v] : s.terms) ok = ok && term_matches(s, k, v, ids, *r);
    if (ok) out.push_back(r);
  }
  return out;
}

std::string selector_for(const ConfigRecord& r) {
  std::string s = fmt::format("model={},task={},gpu={},gpus={},batch={}", r.model_id, r.task, r.gpu_model,
                              r.num_gpus, r.batch());
  if (r.diffusion) s += fmt::format(",ulysses={},ring={}", r.diffusion->ulysses_degree, r.diffusion->ring_degree);
  return s;
}

const ConfigRecord& resolve(const Selector& s, const Rows& rows) {
  std::string pick;
  for (const auto& [k, v] : s.terms)
    if (k == "pick") pick = v;
  for (const auto& [k, v] : s.terms) {
    if (k == "model") {
      const auto ids = models_named(v, rows);
      if (ids.size() > 1) {
        std::vector<std::string> list(ids.begin(), ids.end());
        throw UsageError(fmt::format("selector '{}': model={} is ambiguous; it matches {} models: {}", s.text, v,
                                     ids.size(), fmt::join(list, ", ")));
      }
    }
  }
  const Rows m = match(s, rows);
  if (m.size() == 1) return *m.front();
  if (!m.empty() && pick == "min-energy") return *min_energy(m);
  if (!m.empty() && pick == "min-latency") return *min_latency(m);
  std::string msg;
  Rows close = m;
  if (m.empty()) {
    // The rows that miss the fewest terms.
    std::size_t best = s.terms.size() + 1;
    for (const auto* r : rows) {
      std::size_t miss = 0;
      for (const auto& term : s.terms) {
        Selector one{s.text, {term}};
        if (match(one, Rows{r}).empty()) ++miss;
      }
      if (miss < best) {
        best = miss;
        close.clear();
      }
      if (miss == best) close.push_back(r);
    }
    msg = fmt::format("selector '{}' matches no configuration; closest ({} term{} off):", s.text, best,
                      best == 1 ? "" : "s");
  } else {
    msg = fmt::format("selector '{}' matches {} configurations; add terms or pick=min-energy. Candidates:", s.text,
                      m.size());
  }
  const std::size_t shown = std::min<std::size_t>(close.size(), 12);
  for (std::size_t i = 0; i < shown; ++i)
    msg += fmt::format("\n  {}  ({}, {:.4g} J/{}, {} {:.4g} ms)", selector_for(*close[i]), close[i]->where(),
                       close[i]->energy_per_unit_j(), close[i]->unit(), close[i]->latency_name(), close[i]->latency_ms());
  if (close.size() > shown) msg += fmt::format("\n  ... and {} more", close.size() - shown);
  throw UsageError(msg);
}

}  // namespace wattlab::diagnose

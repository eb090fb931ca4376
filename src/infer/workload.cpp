#include "infer/workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "wattlab/core/error.h"

namespace wattlab::infer {
namespace {

// Common English words, one token each in the usual tokenizers (and one word = one token in the
// reference server's word tokenizer), so a prompt of N words is about N prompt tokens anywhere.
constexpr const char* kWords[] = {
    "the", "of", "and", "to", "in", "is", "that", "it", "for", "on", "with", "as", "was", "at", "by", "be",
    "this", "are", "from", "or", "have", "an", "they", "which", "one", "you", "were", "her", "all", "she",
    "there", "would", "their", "we", "him", "been", "has", "when", "who", "will", "more", "no", "if", "out",
    "so", "said", "what", "up", "its", "about", "into", "than", "them", "can", "only", "other", "new", "some",
    "could", "time", "these", "two", "may", "then"};
constexpr std::size_t kWordCount = sizeof(kWords) / sizeof(kWords[0]);

// Bisection of an increasing function for f(x) = target on [lo, hi].
template <class F>
double solve_increasing(F f, double target, double lo, double hi) {
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (f(mid) < target ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// E[min(L, c)] of the geometric law with q = 1 - p: the sum over k < c of P(L > k) = (1 - q^c) / (1 - q).
double geometric_capped_mean(double q, double cap) { return q <= 0 ? 1.0 : (1 - std::pow(q, cap)) / (1 - q); }

// E[min(X, c)] of X = exp(N(mu, s^2)).
double lognormal_capped_mean(double mu, double s, double cap) {
  const double lc = std::log(cap);
  return std::exp(mu + s * s / 2) * normal_cdf((lc - mu - s * s) / s) + cap * (1 - normal_cdf((lc - mu) / s));
}

double solve_param(const LengthDistribution& d) {
  const auto cap = static_cast<double>(d.cap);
  switch (d.kind) {
    case LengthKind::geometric:
      return d.mean <= 1 ? 0.0 : solve_increasing([&](double q) { return geometric_capped_mean(q, cap); }, d.mean, 0, 1);
    case LengthKind::lognormal: {
      const double s = d.sigma;
      return solve_increasing([&](double mu) { return lognormal_capped_mean(mu, s, cap); }, d.mean,
                              std::log(d.mean) - s * s - 20, std::log(cap) + 20);
    }
    case LengthKind::fixed:
      return 0;
  }
  return 0;
}

}  // namespace

LengthKind parse_length_kind(const std::string& name) {
  if (name == "geometric") return LengthKind::geometric;
  if (name == "lognormal") return LengthKind::lognormal;
  if (name == "fixed") return LengthKind::fixed;
  throw UsageError(fmt::format("length distribution '{}': expected geometric, lognormal or fixed", name));
}

const char* to_string(LengthKind k) {
  switch (k) {
    case LengthKind::geometric: return "geometric";
    case LengthKind::lognormal: return "lognormal";
    case LengthKind::fixed: return "fixed";
  }
  return "?";
}

void validate(const LengthDistribution& d, const std::string& what) {
  if (d.cap < 1) throw UsageError(fmt::format("{}: the cap {} must be at least 1", what, d.cap));
  if (!std::isfinite(d.mean) || d.mean < 1)
    throw UsageError(fmt::format("{}: the mean {} must be at least 1 token", what, d.mean));
  const bool fixed = d.kind == LengthKind::fixed;
  if (fixed ? d.mean > static_cast<double>(d.cap) : d.mean >= static_cast<double>(d.cap))
    throw UsageError(fmt::format("{}: the mean {} must be below the cap {} (the cap truncates the draws)", what,
                                 d.mean, d.cap));
  if (d.kind == LengthKind::lognormal && !(d.sigma > 0 && d.sigma <= 5))
    throw UsageError(fmt::format("{}: the lognormal sigma {} must be in (0, 5]", what, d.sigma));
}

double capped_mean(const LengthDistribution& d) {
  const double p = solve_param(d);
  const auto cap = static_cast<double>(d.cap);
  switch (d.kind) {
    case LengthKind::geometric: return geometric_capped_mean(p, cap);
    case LengthKind::lognormal: return lognormal_capped_mean(p, d.sigma, cap);
    case LengthKind::fixed: return std::round(d.mean);
  }
  return 0;
}

LengthSampler::LengthSampler(const LengthDistribution& d, uint64_t seed) : d_(d), rng_(seed), param_(solve_param(d)) {}

double LengthSampler::uniform() {
  return (static_cast<double>(rng_() >> 11) + 0.5) * 0x1.0p-53;  // 53 bits, never 0 or 1
}

int64_t LengthSampler::next() {
  double x = 0;
  switch (d_.kind) {
    case LengthKind::geometric:  // inverse CDF: P(L > k) = q^k
      x = param_ <= 0 ? 1 : std::ceil(std::log(uniform()) / std::log(param_));
      break;
    case LengthKind::lognormal: {  // Box-Muller, one normal per draw
      const double z = std::sqrt(-2 * std::log(uniform())) * std::cos(2 * M_PI * uniform());
      x = std::round(std::exp(param_ + d_.sigma * z));
      break;
    }
    case LengthKind::fixed:
      x = std::round(d_.mean);
      break;
  }
  return static_cast<int64_t>(std::clamp(x, 1.0, static_cast<double>(d_.cap)));
}

std::vector<BenchRequest> synthetic_requests(const WorkloadSpec& spec, std::size_t n, uint64_t seed) {
  validate(spec.input, "input lengths");
  validate(spec.output, "output lengths");
  // Three streams from one seed: input lengths, output lengths, prompt words.
  LengthSampler in(spec.input, seed * 3 + 0), out(spec.output, seed * 3 + 1);
  std::mt19937_64 words(seed * 3 + 2);
  std::vector<BenchRequest> r(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto& q = r[i];
    q.id = fmt::format("s{}-{}", seed, i);
    q.api = spec.api;
    q.input_tokens = static_cast<int>(in.next());
    q.max_tokens = static_cast<int>(out.next());
    std::string text;
    text.reserve(static_cast<std::size_t>(q.input_tokens) * 5);
    for (int w = 0; w < q.input_tokens; ++w) {
      if (w) text += ' ';
      text += kWords[words() % kWordCount];
    }
    if (spec.api == Api::chat) q.messages_json = nlohmann::json::array({{{"role", "user"}, {"content", text}}}).dump();
    else q.prompt = std::move(text);
  }
  return r;
}

}  // namespace wattlab::infer

// Synthetic request sets with the leaderboard task's lengths (docs/serve-bench.md, "Synthetic
// workload"): input and output lengths drawn around given means, reproducibly from a seed.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "infer/request_set.h"

namespace wattlab::infer {

enum class LengthKind {
  geometric,  // P(L = k) = p (1-p)^(k-1), k >= 1: the maximum-entropy law given only a mean
  lognormal,  // exp(N(mu, sigma^2)), rounded, at least 1
  fixed,      // every length is the mean, rounded
};
LengthKind parse_length_kind(const std::string& name);  // UsageError naming the choices
const char* to_string(LengthKind k);

// Lengths in tokens, capped at `cap` (a longer draw becomes `cap`, as a server stops at
// max_tokens). `mean` is the mean after the cap: the law's parameter is solved for it.
struct LengthDistribution {
  LengthKind kind = LengthKind::geometric;
  double mean = 0;       // tokens, >= 1 and < cap (fixed: <= cap)
  double sigma = 1.0;    // lognormal: the log's standard deviation
  int64_t cap = 1 << 30;
};

// Checks the distribution (UsageError naming `what` and the problem).
void validate(const LengthDistribution& d, const std::string& what);

// The mean of the capped law for its solved parameter (= d.mean up to the solver's tolerance for
// geometric and lognormal, before rounding; exactly round(d.mean) for fixed).
double capped_mean(const LengthDistribution& d);

// Draws lengths reproducibly: mt19937_64 (its sequence is fixed by the C++ standard) turned into
// uniforms and normals here, not by std:: distributions, whose algorithms differ between
// standard libraries.
class LengthSampler {
 public:
  LengthSampler(const LengthDistribution& d, uint64_t seed);
  int64_t next();

 private:
  double uniform();  // in (0, 1)
  LengthDistribution d_;
  std::mt19937_64 rng_;
  double param_ = 0;  // geometric: q = 1 - p; lognormal: mu
};

struct WorkloadSpec {
  Api api = Api::chat;        // the leaderboard's LLM tasks use chat completions
  LengthDistribution input;   // prompt tokens (words: docs/refserver.md)
  LengthDistribution output;  // max_tokens of each request (sent with ignore_eos)
  std::string source;         // where the means come from, for the record
};

// `n` requests: prompt lengths and max_tokens drawn from the spec with `seed` (the same seed gives
// the same set), prompts of that many common words, ids "s<seed>-<i>".
std::vector<BenchRequest> synthetic_requests(const WorkloadSpec& spec, std::size_t n, uint64_t seed);

}  // namespace wattlab::infer

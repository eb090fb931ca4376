// The recipe parser, printer and shape check (grammar: docs/gemm-inputs.md).
#include "lab/recipe.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>

namespace wattlab::lab {
namespace {

struct KindName {
  StageKind kind;
  const char* name;
  const char* params;  // accepted parameters, for messages
};
constexpr KindName kinds[] = {
    {StageKind::normal, "normal", "mean, std"},
    {StageKind::uniform, "uniform", "low, high"},
    {StageKind::constant, "constant", "value"},
    {StageKind::distinct, "distinct", "n"},
    {StageKind::sort, "sort", "fraction, along, scope"},
    {StageKind::zero, "zero", "fraction"},
    {StageKind::sparse24, "sparse24", "keep"},
    {StageKind::flip, "flip", "n"},
    {StageKind::randomize_low, "randomize_low", "n"},
    {StageKind::randomize_high, "randomize_high", "n"},
    {StageKind::zero_low, "zero_low", "n"},
    {StageKind::zero_high, "zero_high", "n"},
    {StageKind::xor_bits, "xor_bits", "mask"},
};
constexpr const char* stage_list =
    "normal, uniform, constant, distinct, sort, zero, sparse24, flip, randomize_low, randomize_high, "
    "zero_low, zero_high, xor_bits";

bool is_source(StageKind k) { return k == StageKind::normal || k == StageKind::uniform || k == StageKind::constant; }

class Parser {
 public:
  explicit Parser(std::string_view text) : t_(text) {}

  Result<Recipe> run() {
    Recipe r;
    skip_ws();
    if (at_end()) return fail("expected a source stage (normal, uniform or constant), got the end of the recipe");
    while (true) {
      auto st = stage(static_cast<int>(r.stages.size()));
      if (!st) return st.error();
      if (auto err = check_order(r, *st)) return *err;
      r.stages.push_back(*st);
      skip_ws();
      if (at_end()) break;
      if (t_[i_] != '|') return fail(fmt::format("expected '|' or the end of the recipe, got {}", got()));
      ++i_;
      skip_ws();
      if (at_end()) return fail("expected a stage after '|', got the end of the recipe");
    }
    return r;
  }

 private:
  std::string_view t_;
  std::size_t i_ = 0;

  bool at_end() const { return i_ >= t_.size(); }
  void skip_ws() {
    while (!at_end() && std::isspace(static_cast<unsigned char>(t_[i_]))) ++i_;
  }
  std::string got() const {
    if (at_end()) return "the end of the recipe";
    return fmt::format("'{}'", t_[i_]);
  }
  Error fail(const std::string& what) const { return fail_at(i_, what); }
  Error fail_at(std::size_t pos, const std::string& what) const {
    Error e;
    e.kind = ErrorKind::invalid_argument;
    e.what = fmt::format("bad recipe at column {}: {}\n  {}\n  {}^", pos + 1, what, t_, std::string(pos, ' '));
    e.hint = "a recipe is stages joined by '|', e.g. normal(mean=0, std=1) | zero(fraction=0.5); see docs/gemm-inputs.md";
    return e;
  }

  std::string ident() {
    const std::size_t s = i_;
    while (!at_end() && (std::isalnum(static_cast<unsigned char>(t_[i_])) || t_[i_] == '_')) ++i_;
    return std::string(t_.substr(s, i_ - s));
  }

  // number [ '^' number ] ; number: decimal/float or 0x hex.
  std::optional<double> number() {
    const std::size_t s = i_;
    auto one = [&]() -> std::optional<double> {
      std::size_t b = i_;
      if (!at_end() && (t_[i_] == '+' || t_[i_] == '-')) ++i_;
      if (i_ + 1 < t_.size() && t_[i_] == '0' && (t_[i_ + 1] == 'x' || t_[i_ + 1] == 'X')) {
        const bool neg = t_[b] == '-';
        i_ += 2;
        const std::size_t h = i_;
        while (!at_end() && std::isxdigit(static_cast<unsigned char>(t_[i_]))) ++i_;
        if (i_ == h || i_ - h > 8) return std::nullopt;
        uint64_t v = 0;
        std::from_chars(t_.data() + h, t_.data() + i_, v, 16);
        return neg ? -static_cast<double>(v) : static_cast<double>(v);
      }
      while (!at_end() && (std::isdigit(static_cast<unsigned char>(t_[i_])) || t_[i_] == '.' || t_[i_] == 'e' ||
                           t_[i_] == 'E' || ((t_[i_] == '+' || t_[i_] == '-') && (t_[i_ - 1] == 'e' || t_[i_ - 1] == 'E'))))
        ++i_;
      if (b < t_.size() && t_[b] == '+') ++b;
      double v = 0;
      auto [p, ec] = std::from_chars(t_.data() + b, t_.data() + i_, v);
      if (ec != std::errc() || p != t_.data() + i_ || !std::isfinite(v)) return std::nullopt;
      return v;
    };
    auto base = one();
    if (!base) {
      i_ = s;
      return std::nullopt;
    }
    if (!at_end() && t_[i_] == '^') {
      ++i_;
      const std::size_t es = i_;
      auto ex = one();
      if (!ex || *ex != std::floor(*ex) || std::fabs(*ex) > 1074) {
        i_ = es;
        return std::nullopt;
      }
      double v = 1;
      const double f = *ex >= 0 ? *base : 1.0 / *base;
      for (int k = 0; k < static_cast<int>(std::fabs(*ex)); ++k) v *= f;
      if (!std::isfinite(v)) return std::nullopt;
      return v;
    }
    return base;
  }

  Result<Stage> stage(int index) {
    Stage st;
    const std::size_t name_at = i_;
    st.column = static_cast<int>(name_at) + 1;
    const std::string name = ident();
    if (name.empty()) return fail(fmt::format("expected a stage name ({}), got {}", stage_list, got()));
    const KindName* kn = nullptr;
    for (const KindName& k : kinds)
      if (name == k.name) kn = &k;
    if (kn == nullptr) return fail_at(name_at, fmt::format("unknown stage '{}'; stages: {}", name, stage_list));
    st.kind = kn->kind;
    (void)index;
    skip_ws();
    bool seen[8] = {};
    bool have_value = false, have_n = false, have_mask = false, have_fraction = false;
    if (!at_end() && t_[i_] == '(') {
      ++i_;
      skip_ws();
      if (!at_end() && t_[i_] == ')') {
        ++i_;
      } else {
        while (true) {
          skip_ws();
          const std::size_t key_at = i_;
          const std::string key = ident();
          if (key.empty()) return fail(fmt::format("expected a parameter name ({}) of '{}', got {}", kn->params, name, got()));
          skip_ws();
          if (at_end() || t_[i_] != '=') return fail(fmt::format("expected '=' after '{}', got {}", key, got()));
          ++i_;
          skip_ws();
          const std::size_t val_at = i_;
          auto bad_param = [&]() {
            return fail_at(key_at, fmt::format("'{}' takes no parameter '{}'; it takes: {}", name, key, kn->params));
          };
          auto need_number = [&]() -> Result<double> {
            auto v = number();
            if (!v) return fail_at(val_at, fmt::format("expected a number for '{}', got {}", key, got()));
            return *v;
          };
          auto need_int = [&](double lo, double hi) -> Result<int64_t> {
            auto v = number();
            if (!v || *v != std::floor(*v) || *v < lo || *v > hi)
              return fail_at(val_at, fmt::format("expected an integer from {} to {} for '{}'", lo, hi, key));
            return static_cast<int64_t>(*v);
          };
          auto need_fraction = [&]() -> Result<double> {
            auto v = number();
            if (!v || *v < 0 || *v > 1) return fail_at(val_at, fmt::format("expected a number from 0 to 1 for '{}'", key));
            return *v;
          };
          auto word = [&]() {
            std::string w = ident();
            for (char& c : w) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            return w;
          };
          int slot = -1;
          const StageKind k = st.kind;
          if ((k == StageKind::normal) && key == "mean") {
            slot = 0;
            auto v = need_number();
            if (!v) return v.error();
            st.mean = *v;
          } else if (k == StageKind::normal && key == "std") {
            slot = 1;
            auto v = need_number();
            if (!v) return v.error();
            if (*v < 0) return fail_at(val_at, "expected std >= 0");
            st.stddev = *v;
          } else if (k == StageKind::uniform && key == "low") {
            slot = 0;
            auto v = need_number();
            if (!v) return v.error();
            st.low = *v;
          } else if (k == StageKind::uniform && key == "high") {
            slot = 1;
            auto v = need_number();
            if (!v) return v.error();
            st.high = *v;
          } else if (k == StageKind::constant && key == "value") {
            slot = 0;
            auto v = need_number();
            if (!v) return v.error();
            st.value = *v;
            have_value = true;
          } else if (k == StageKind::distinct && key == "n") {
            slot = 0;
            auto v = need_int(1, 2147483647);
            if (!v) return v.error();
            st.n = *v;
            have_n = true;
          } else if ((k == StageKind::sort || k == StageKind::zero) && key == "fraction") {
            slot = 0;
            auto v = need_fraction();
            if (!v) return v.error();
            st.fraction = *v;
            have_fraction = true;
          } else if (k == StageKind::sort && key == "along") {
            slot = 1;
            const std::string w = word();
            if (w == "k") st.along = Along::K;
            else if (w == "mn") st.along = Along::MN;
            else if (w == "m") st.along = Along::M;
            else if (w == "n") st.along = Along::N;
            else return fail_at(val_at, "expected K, MN, M or N for 'along'");
          } else if (k == StageKind::sort && key == "scope") {
            slot = 2;
            const std::string w = word();
            if (w == "matrix") st.scope = SortScope::matrix;
            else if (w == "line") st.scope = SortScope::line;
            else return fail_at(val_at, "expected matrix or line for 'scope'");
          } else if (k == StageKind::sparse24 && key == "keep") {
            slot = 0;
            const std::string w = word();
            if (w == "random") st.keep = Keep24::random;
            else if (w == "largest") st.keep = Keep24::largest;
            else return fail_at(val_at, "expected random or largest for 'keep'");
          } else if (is_bit_stage(k) && k != StageKind::xor_bits && key == "n") {
            slot = 0;
            auto v = need_int(0, 32);
            if (!v) return v.error();
            st.n = *v;
            have_n = true;
          } else if (k == StageKind::xor_bits && key == "mask") {
            slot = 0;
            auto v = need_int(0, 4294967295.0);
            if (!v) return v.error();
            st.mask = static_cast<uint32_t>(*v);
            have_mask = true;
          } else {
            return bad_param();
          }
          if (seen[slot]) return fail_at(key_at, fmt::format("parameter '{}' given twice", key));
          seen[slot] = true;
          skip_ws();
          if (!at_end() && t_[i_] == ',') {
            ++i_;
            continue;
          }
          if (!at_end() && t_[i_] == ')') {
            ++i_;
            break;
          }
          return fail(fmt::format("expected ',' or ')' after parameter '{}', got {}", key, got()));
        }
      }
    }
    const auto missing = [&](const char* p) {
      return fail_at(name_at, fmt::format("'{}' needs parameter '{}'", name, p));
    };
    if (st.kind == StageKind::constant && !have_value) return missing("value");
    if (st.kind == StageKind::distinct && !have_n) return missing("n");
    if (st.kind == StageKind::zero && !have_fraction) return missing("fraction");
    if (is_bit_stage(st.kind) && st.kind != StageKind::xor_bits && !have_n) return missing("n");
    if (st.kind == StageKind::xor_bits && !have_mask) return missing("mask");
    if (st.kind == StageKind::uniform && !(st.low <= st.high)) return fail_at(name_at, "'uniform' needs low <= high");
    return st;
  }

  std::optional<Error> check_order(const Recipe& r, const Stage& st) const {
    const std::size_t at = static_cast<std::size_t>(st.column - 1);
    if (r.stages.empty()) {
      if (!is_source(st.kind))
        return fail_at(at, fmt::format("a recipe starts with a source (normal, uniform or constant), got '{}'",
                                       to_string(st.kind)));
      return std::nullopt;
    }
    if (is_source(st.kind))
      return fail_at(at, fmt::format("only one source per recipe; '{}' follows '{}'", to_string(st.kind),
                                     to_string(r.stages[0].kind)));
    if (st.kind == StageKind::distinct && (r.stages.size() != 1 || r.stages[0].kind == StageKind::constant))
      return fail_at(at, "'distinct' must directly follow 'normal' or 'uniform'");
    if (!is_bit_stage(st.kind)) {
      for (const Stage& p : r.stages)
        if (is_bit_stage(p.kind))
          return fail_at(at, fmt::format("value stage '{}' after bit stage '{}': value stages come first (values "
                                         "become stored bits at the first bit stage)",
                                         to_string(st.kind), to_string(p.kind)));
    }
    return std::nullopt;
  }
};

std::string num(double v) {
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  (void)ec;
  return std::string(buf, p);
}

}  // namespace

bool is_bit_stage(StageKind kind) {
  switch (kind) {
    case StageKind::flip:
    case StageKind::randomize_low:
    case StageKind::randomize_high:
    case StageKind::zero_low:
    case StageKind::zero_high:
    case StageKind::xor_bits: return true;
    default: return false;
  }
}

std::string_view to_string(StageKind kind) {
  for (const KindName& k : kinds)
    if (k.kind == kind) return k.name;
  return "?";
}

std::string_view to_string(Along along) {
  switch (along) {
    case Along::K: return "K";
    case Along::MN: return "MN";
    case Along::M: return "M";
    case Along::N: return "N";
  }
  return "?";
}

Result<Recipe> parse_recipe(std::string_view text) { return Parser(text).run(); }

std::string to_string(const Recipe& recipe) {
  std::string out;
  for (const Stage& s : recipe.stages) {
    if (!out.empty()) out += " | ";
    out += to_string(s.kind);
    switch (s.kind) {
      case StageKind::normal: out += fmt::format("(mean={}, std={})", num(s.mean), num(s.stddev)); break;
      case StageKind::uniform: out += fmt::format("(low={}, high={})", num(s.low), num(s.high)); break;
      case StageKind::constant: out += fmt::format("(value={})", num(s.value)); break;
      case StageKind::distinct: out += fmt::format("(n={})", s.n); break;
      case StageKind::sort:
        out += fmt::format("(fraction={}, along={}, scope={})", num(s.fraction), to_string(s.along),
                           s.scope == SortScope::matrix ? "matrix" : "line");
        break;
      case StageKind::zero: out += fmt::format("(fraction={})", num(s.fraction)); break;
      case StageKind::sparse24: out += fmt::format("(keep={})", s.keep == Keep24::random ? "random" : "largest"); break;
      case StageKind::xor_bits: out += fmt::format("(mask=0x{:X})", s.mask); break;
      default: out += fmt::format("(n={})", s.n); break;
    }
  }
  return out;
}

Status validate(const Recipe& recipe, const OperandShape& shape) {
  auto bad = [](std::string what) {
    Error e;
    e.kind = ErrorKind::invalid_argument;
    e.what = std::move(what);
    return e;
  };
  if (recipe.stages.empty() || !is_source(recipe.stages[0].kind)) return bad("recipe has no source stage");
  if (shape.M <= 0 || shape.N <= 0 || shape.K <= 0)
    return bad(fmt::format("shape M={} N={} K={}: every dim must be > 0", shape.M, shape.N, shape.K));
  if (elements(shape) > 2147483647)
    return bad(fmt::format("operand {} has {} elements; at most 2^31-1", to_string(shape.which), elements(shape)));
  const int w = bits(shape.dtype);
  for (const Stage& s : recipe.stages) {
    if (is_bit_stage(s.kind) && s.kind != StageKind::xor_bits && s.n > w)
      return bad(fmt::format("'{}(n={})' exceeds the {} bits of {}", to_string(s.kind), s.n, w, to_string(shape.dtype)));
    if (s.kind == StageKind::xor_bits && w < 32 && (s.mask >> w) != 0)
      return bad(fmt::format("'xor_bits(mask=0x{:X})' has bits beyond the {} bits of {}", s.mask, w, to_string(shape.dtype)));
    if (s.kind == StageKind::sort && s.along == Along::M && shape.which != Operand::A)
      return bad("'sort(along=M)' applies to operand A only (B is K x N); use along=MN or along=K");
    if (s.kind == StageKind::sort && s.along == Along::N && shape.which != Operand::B)
      return bad("'sort(along=N)' applies to operand B only (A is M x K); use along=MN or along=K");
    if (s.kind == StageKind::sparse24 && shape.K % 4 != 0)
      return bad(fmt::format("'sparse24' needs K divisible by 4, K = {}", shape.K));
  }
  return Status::success();
}

}  // namespace wattlab::lab

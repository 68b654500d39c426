// SPDX-License-Identifier: MIT
/// @file Test helpers: per-run seeds, random shapes and strided views, raw element access, poison, and
/// double-precision references with tolerances derived from the error of a naive low-precision run.
///
/// Everything that decides whether weft is right is computed here WITHOUT weft: elements are read
/// from the raw storage bytes through the view's own strides, 16-bit floats are decoded and rounded
/// by independent code, and expected values are plain double-precision loops. weft is only used to
/// build inputs (from_vector and views, which the core suite checks on their own).
#pragma once

#include <doctest/doctest.h>

// The pointwise part of weft (not the umbrella <weft/weft.hpp>, which also pulls in Eigen for the
// dense ops: ~1.5 s of parsing per test translation unit that none of these tests use).
#include <weft/ops/factories.hpp>
#include <weft/ops/fuse.hpp>
#include <weft/log/log.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace weft_test {

using weft::bfloat16;
using weft::half;
using weft::Shape;
using weft::Tensor;
using weft::TensorView;

// ---------------------------------------------------------------------------
// Seeds: fresh per run, printed once, overridable with WEFT_TEST_SEED
// ---------------------------------------------------------------------------

/// The run's seed: $WEFT_TEST_SEED when set, else fresh entropy. Printed on first use.
inline std::uint64_t seed() {
  static const std::uint64_t value = [] {
    std::uint64_t s;
    const char* env = std::getenv("WEFT_TEST_SEED");
    if (env && *env) {
      s = std::strtoull(env, nullptr, 0);
    } else {
      std::random_device rd;
      s = (std::uint64_t(rd()) << 32) ^ std::uint64_t(rd()) ^
          std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
    }
    std::fprintf(stderr, "[weft tests] WEFT_TEST_SEED=%llu (set this environment variable to replay the run)\n",
                 static_cast<unsigned long long>(s));
    return s;
  }();
  return value;
}

/// A seed per test site, so that one test's stream does not depend on which other tests ran.
inline std::uint64_t site_seed(const char* file, int line) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the file's base name
  const char* base = std::strrchr(file, '/');
  for (const char* p = base ? base + 1 : file; *p; ++p) h = (h ^ std::uint64_t(static_cast<unsigned char>(*p))) * 1099511628211ull;
  std::uint64_t x = seed() ^ h ^ (std::uint64_t(line) * 0x9E3779B97F4A7C15ull);
  // splitmix64 finalizer
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// Random numbers for a test (std::mt19937_64; nothing here comes from weft).
struct Rng {
  std::mt19937_64 gen;
  explicit Rng(std::uint64_t s) : gen(s) {}
  /// A draw in [0, 1): the top 53 bits of one engine output. (std::uniform_real_distribution
  /// computes a log per draw where nothing folds it, and the -O0 sanitizer build spent a third of
  /// some cases there.)
  double unit() { return double(gen() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * unit(); }
  std::int64_t integer(std::int64_t lo, std::int64_t hi) {  // inclusive
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(gen);
  }
  bool chance(double p) { return unit() < p; }
  template <class C>
  const auto& pick(const C& c) {
    return c[std::size_t(integer(0, std::int64_t(std::size(c)) - 1))];
  }
  std::uint64_t bits() { return gen(); }
};

}  // namespace weft_test

/// Declares `Rng name` seeded from the run seed and this line; failures print the seed.
#define WEFT_TEST_RNG(name)                                                   \
  ::weft_test::Rng name(::weft_test::site_seed(__FILE__, __LINE__));          \
  INFO("replay with WEFT_TEST_SEED=", ::weft_test::seed())

namespace weft_test {
// The helpers below make, move and read tensors: in the backend's namespace (docs/architecture.md,
// ODR safety), since nvcc-compiled and g++-compiled test files instantiate them alike.
inline namespace WEFT_BACKEND_ABI {

// ---------------------------------------------------------------------------
// Element types: independent decoding, rounding, ulps
// ---------------------------------------------------------------------------

template <class T>
inline constexpr bool is_float16_v = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;
template <class T>
inline constexpr bool is_float_type_v = std::is_floating_point_v<T> || is_float16_v<T>;

template <class T>
constexpr const char* type_name() {
  if constexpr (std::is_same_v<T, float>) return "float32";
  else if constexpr (std::is_same_v<T, double>) return "float64";
  else if constexpr (std::is_same_v<T, half>) return "float16";
  else if constexpr (std::is_same_v<T, bfloat16>) return "bfloat16";
  else if constexpr (std::is_same_v<T, std::int8_t>) return "int8";
  else if constexpr (std::is_same_v<T, std::uint8_t>) return "uint8";
  else if constexpr (std::is_same_v<T, std::int16_t>) return "int16";
  else if constexpr (std::is_same_v<T, std::int32_t>) return "int32";
  else if constexpr (std::is_same_v<T, std::int64_t>) return "int64";
  else return "bool";
}

/// binary16 bits -> exact value (sign, 5-bit exponent, 10-bit mantissa).
inline double half_bits_value(std::uint16_t h) {
  int sign = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v;
  if (e == 0x1f) v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (e == 0) v = std::ldexp(double(m), -24);
  else v = std::ldexp(double(m | 0x400), e - 25);
  return sign ? -v : v;
}
/// bfloat16 bits -> exact value (the top half of a binary32).
inline double bfloat16_bits_value(std::uint16_t b) {
  std::uint32_t u = std::uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return double(f);
}

/// x rounded to nearest-even on a grid with `mantissa` significant bits, smallest exponent
/// `min_exp` (values are m * 2^(e - mantissa) with e >= min_exp: gradual underflow), overflow to
/// inf at `overflow` (the first value that rounds out of range). Independent of weft's bit tricks.
inline double round_to_format(double x, int mantissa, int min_exp, double overflow) {
  if (std::isnan(x) || std::isinf(x) || x == 0) return x;
  int e;
  std::frexp(std::fabs(x), &e);  // |x| in [2^(e-1), 2^e)
  int q = std::max(e, min_exp) - mantissa;
  double r = std::nearbyint(std::ldexp(x, -q));  // default rounding mode: nearest, ties to even
  double v = std::ldexp(r, q);
  if (std::fabs(v) >= overflow) return std::copysign(std::numeric_limits<double>::infinity(), x);
  return v;
}
// binary16: 11 significant bits, normal exponents down to 2^-14 (so e >= -13 in frexp terms),
// largest finite 65504; 65520 is the midpoint to the next (nonexistent) value and rounds to inf.
inline double round_half(double x) { return round_to_format(x, 11, -13, 65520.0); }
// bfloat16: 8 significant bits, binary32's exponent range (normal >= 2^-126), max (2 - 2^-7) 2^127.
inline double round_bfloat16(double x) { return round_to_format(x, 8, -125, std::ldexp(2.0 - std::ldexp(1.0, -8), 127)); }
inline double round_float(double x) { return double(float(x)); }

/// x rounded to T's precision, in double (the independent model of a store or cast to T).
template <class T>
double round_to(double x) {
  if constexpr (std::is_same_v<T, half>) return round_half(x);
  else if constexpr (std::is_same_v<T, bfloat16>) return round_bfloat16(x);
  else if constexpr (std::is_same_v<T, float>) return round_float(x);
  else if constexpr (std::is_same_v<T, double>) return x;
  else if constexpr (std::is_same_v<T, bool>) return x != 0 ? 1.0 : 0.0;
  else return std::trunc(x);  // integers: C++ conversion truncates toward zero
}

/// v as an element of integer type T holds it after arithmetic that wraps (int8, uint8, int16 in
/// weft and torch): reduced modulo 2^w into T's range, w = 8 * sizeof(T), written out arithmetically
/// rather than by a C++ conversion. int32 and int64 results are taken as they are (v itself).
template <class T>
double wrapped(double v) {
  if constexpr (sizeof(T) >= 4) {
    return v;
  } else {
    const double span = std::ldexp(1.0, 8 * int(sizeof(T))), lo = double(std::numeric_limits<T>::lowest());
    const double r = std::fmod(v - lo, span);
    return (r < 0 ? r + span : r) + lo;
  }
}

/// Machine epsilon (spacing of T at 1); 0 for integers and bool (their arithmetic is exact).
template <class T>
constexpr double eps_of() {
  if constexpr (std::is_same_v<T, half>) return 0x1p-10;
  else if constexpr (std::is_same_v<T, bfloat16>) return 0x1p-7;
  else if constexpr (std::is_same_v<T, float>) return 0x1p-23;
  else if constexpr (std::is_same_v<T, double>) return 0x1p-52;
  else return 0.0;
}

/// Machine epsilon of the type T computes in: float for 16-bit floats (they compute in float),
/// 0 for integers and bool.
template <class T>
constexpr double compute_eps() {
  if constexpr (std::is_same_v<T, double>) return eps_of<double>();
  else if constexpr (is_float_type_v<T>) return eps_of<float>();
  else return 0.0;
}

/// Spacing of T's values at magnitude |x| (the ulp), incl. the subnormal floor.
template <class T>
double ulp_of(double x) {
  if constexpr (!is_float_type_v<T>) {
    return 0.0;
  } else {
    constexpr int mant = std::is_same_v<T, half> ? 11 : std::is_same_v<T, bfloat16> ? 8 : std::is_same_v<T, float> ? 24 : 53;
    constexpr int min_exp = std::is_same_v<T, half> ? -13 : std::is_same_v<T, double> ? -1021 : -125;
    x = std::fabs(x);
    int e = min_exp;
    if (x > 0 && std::isfinite(x)) {
      std::frexp(x, &e);
      e = std::max(e, min_exp);
    }
    return std::ldexp(1.0, e - mant);
  }
}

/// Reads one element of T from raw bytes as an exact double (bool: 0/1; any other byte is reported
/// by `valid = false`).
template <class T>
double decode(const unsigned char* p, bool* valid = nullptr) {
  if (valid) *valid = true;
  if constexpr (std::is_same_v<T, bool>) {
    if (valid) *valid = *p <= 1;
    return double(*p);
  } else if constexpr (std::is_same_v<T, half>) {
    std::uint16_t b;
    std::memcpy(&b, p, 2);
    return half_bits_value(b);
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    std::uint16_t b;
    std::memcpy(&b, p, 2);
    return bfloat16_bits_value(b);
  } else {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return double(v);
  }
}

/// A T holding the value x (x must already be representable, e.g. produced by round_to<T>).
template <class T>
T make_value(double x) {
  if constexpr (std::is_same_v<T, half>) return half(float(x));
  else if constexpr (std::is_same_v<T, bfloat16>) return bfloat16(float(x));
  else if constexpr (std::is_same_v<T, bool>) return x != 0;
  else return T(x);
}

// ---------------------------------------------------------------------------
// Shapes and indices
// ---------------------------------------------------------------------------

inline std::vector<std::int64_t> dims_of(const Shape& s) { return std::vector<std::int64_t>(s.begin(), s.end()); }

inline std::string shape_str(const Shape& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

/// Calls f(index_vector) for every multi-index of `shape` in row-major order.
template <class F>
void for_each_index(const Shape& shape, F&& f) {
  std::int64_t n = 1;
  for (std::int64_t e : shape) n *= e;
  if (n == 0) return;
  std::vector<std::int64_t> idx(std::size_t(shape.rank()), 0);
  for (std::int64_t i = 0; i < n; ++i) {
    f(static_cast<const std::vector<std::int64_t>&>(idx));
    for (int d = shape.rank() - 1; d >= 0; --d) {
      if (++idx[std::size_t(d)] < shape[d]) break;
      idx[std::size_t(d)] = 0;
    }
  }
}

/// numpy broadcasting of several shapes (independent of weft::broadcast_into); false if incompatible.
inline bool broadcast_shapes(const std::vector<Shape>& shapes, Shape& out) {
  int rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.rank());
  std::vector<std::int64_t> r(std::size_t(rank), 1);
  for (const Shape& s : shapes)
    for (int d = 0; d < s.rank(); ++d) {
      std::int64_t& acc = r[std::size_t(d + rank - s.rank())];
      std::int64_t e = s[d];
      if (acc == e || e == 1) continue;
      if (acc != 1) return false;
      acc = e;
    }
  out = Shape(r);
  return true;
}

/// Storage element index of `idx` (an index into `full`, which t broadcasts to) in t's storage.
template <class T>
std::int64_t storage_index(const weft::TensorBase<T>& t, const std::vector<std::int64_t>& idx) {
  std::int64_t off = t.offset();
  int lead = int(idx.size()) - t.dim();
  for (int d = 0; d < t.dim(); ++d)
    if (t.shape()[d] != 1) off += idx[std::size_t(d + lead)] * t.strides()[d];
  return off;
}

template <class T>
const unsigned char* storage_bytes(const weft::TensorBase<T>& t) {
  return static_cast<const unsigned char*>(t.storage()->data());
}
template <class T>
std::int64_t storage_elements(const weft::TensorBase<T>& t) {
  return std::int64_t(t.storage()->bytes() / sizeof(T));
}

/// t's element at multi-index idx of a shape t broadcasts to, read from raw storage.
template <class T>
double value_at(const weft::TensorBase<T>& t, const std::vector<std::int64_t>& idx) {
  return decode<T>(storage_bytes(t) + storage_index(t, idx) * std::int64_t(sizeof(T)));
}

/// t's elements (row-major over its own shape) as exact doubles, read through its strides.
template <class T>
std::vector<double> values_of(const weft::TensorBase<T>& t) {
  std::vector<double> out;
  out.reserve(std::size_t(t.numel()));
  for_each_index(t.shape(), [&](const std::vector<std::int64_t>& idx) { out.push_back(value_at(t, idx)); });
  return out;
}
/// An expression's values (a lazy node such as weft::sum(x, 1) evaluated first).
template <weft::Expression E>
std::vector<double> values_of(const E& e) {
  return values_of(weft::eval(e));
}

/// Random shape: rank in [min_rank, max_rank], extents drawn from 0, 1, small primes, sizes around
/// multiples of 16 and ordinary small numbers; numel capped at max_numel by shrinking extents.
inline Shape random_shape(Rng& rng, int min_rank = 0, int max_rank = 6, std::int64_t max_numel = 6000,
                          double zero_chance = 0.03) {
  static const std::int64_t interesting[] = {1, 1, 2, 3, 4, 5, 7, 8, 11, 13, 15, 16, 17, 19, 23, 31, 32, 33, 37, 47, 63, 65};
  int rank = int(rng.integer(min_rank, max_rank));
  std::vector<std::int64_t> d(static_cast<std::size_t>(rank));
  for (auto& e : d) e = rng.chance(zero_chance) ? 0 : rng.pick(interesting);
  auto numel = [&] {
    std::int64_t n = 1;
    for (auto e : d) n *= e;
    return n;
  };
  while (numel() > max_numel) {  // halve a random extent above 1 (keeps odd sizes odd-ish)
    auto& e = d[std::size_t(rng.integer(0, rank - 1))];
    if (e > 1) e = (e + 1) / 2;
  }
  return Shape(d);
}

/// A shape that broadcasts to `full`: some leading dims dropped, some dims set to 1.
inline Shape broadcastable_to(Rng& rng, const Shape& full, double one_chance = 0.3) {
  int drop = full.rank() ? int(rng.integer(0, rng.chance(0.5) ? 0 : full.rank())) : 0;
  std::vector<std::int64_t> d;
  for (int i = drop; i < full.rank(); ++i) d.push_back(rng.chance(one_chance) ? 1 : full[i]);
  return Shape(d);
}

// ---------------------------------------------------------------------------
// Random values and tensors (incl. non-contiguous views)
// ---------------------------------------------------------------------------

/// Where random values come from: uniform in [lo, hi] (integers: inclusive), optionally
/// log-uniform magnitudes (|x| in [lo, hi], random sign when `signed_`), a chance of exact zeros,
/// and an exclusion zone |x| < avoid around zero.
struct Domain {
  double lo = -4, hi = 4;
  bool log_magnitude = false;
  bool signed_ = true;
  double zero_chance = 0.0;
  double avoid = 0.0;
  double nan_chance = 0.0;  // floating types only
  double grid = 0.0;        // > 0: values are multiples of grid (so that ties and equalities occur)
};

template <class T>
T random_value(Rng& rng, const Domain& d) {
  if constexpr (std::is_same_v<T, bool>) {
    return rng.chance(0.5);
  } else if constexpr (std::is_integral_v<T>) {
    if (rng.chance(d.zero_chance)) return T(0);
    for (;;) {
      std::int64_t v = rng.integer(std::int64_t(std::ceil(d.lo)), std::int64_t(std::floor(d.hi)));
      if (std::fabs(double(v)) >= d.avoid) return T(v);
    }
  } else {
    if (rng.chance(d.nan_chance)) return make_value<T>(std::numeric_limits<double>::quiet_NaN());
    if (rng.chance(d.zero_chance)) return make_value<T>(0.0);
    for (;;) {
      double x;
      if (d.log_magnitude) {  // |x| log-uniform in [lo, hi] (lo > 0)
        x = std::exp(rng.uniform(std::log(d.lo), std::log(d.hi)));
        if (d.signed_ && rng.chance(0.5)) x = -x;
      } else {
        x = rng.uniform(d.lo, d.hi);
      }
      if (d.grid > 0) x = std::round(x / d.grid) * d.grid;
      x = round_to<T>(x);
      if (std::fabs(x) >= d.avoid) return make_value<T>(x);
    }
  }
}

template <class T>
Tensor<T> random_contiguous(Rng& rng, const Shape& shape, const Domain& d) {
  std::vector<T> v(std::size_t(shape.numel()));
  for (auto&& x : v) x = random_value<T>(rng, d);
  return weft::from_vector<T>(v, shape);
}

enum class Layout : int { contiguous, strided, permuted, permuted_strided, expanded, selected, count };

inline const char* layout_name(Layout l) {
  switch (l) {
    case Layout::contiguous: return "contiguous";
    case Layout::strided: return "strided (slice step / narrow)";
    case Layout::permuted: return "permuted";
    case Layout::permuted_strided: return "permuted + strided";
    case Layout::expanded: return "expanded (stride 0)";
    case Layout::selected: return "selected (select of a larger tensor)";
    default: return "?";
  }
}

/// A view of exactly `shape` laid out as `layout`, over a larger random base tensor (so the
/// elements around the view hold data too). Expanded views read some elements several times.
template <class T>
TensorView<T> make_view(Rng& rng, const Shape& shape, const Domain& d, Layout layout) {
  const int r = shape.rank();
  if (layout == Layout::contiguous || (r == 0 && layout != Layout::selected)) return random_contiguous<T>(rng, shape, d);
  if (layout == Layout::expanded) {
    std::vector<std::int64_t> base;
    int drop = int(rng.integer(0, r));
    for (int i = drop; i < r; ++i) base.push_back(rng.chance(0.5) ? 1 : shape[i]);
    return random_contiguous<T>(rng, Shape(base), d).expand(shape);
  }
  if (layout == Layout::selected) {
    int at = int(rng.integer(0, r));
    std::vector<std::int64_t> base = dims_of(shape);
    std::int64_t extent = rng.integer(2, 3);
    base.insert(base.begin() + at, extent);
    return random_contiguous<T>(rng, Shape(base), d).select(at, rng.integer(0, extent - 1));
  }
  // strided and/or permuted
  std::vector<std::int64_t> perm(static_cast<std::size_t>(r));
  std::iota(perm.begin(), perm.end(), 0);
  if (layout == Layout::permuted || layout == Layout::permuted_strided) {
    std::shuffle(perm.begin(), perm.end(), rng.gen);
    if (r >= 2 && std::is_sorted(perm.begin(), perm.end())) std::swap(perm[0], perm[std::size_t(r - 1)]);
  }
  // view = base.permute(perm) must have `shape`: base[perm[i]] = shape[i].
  const std::size_t ur = static_cast<std::size_t>(r);
  std::vector<std::int64_t> pshape(ur), step(ur, 1), start(ur, 0);
  bool strided = layout == Layout::strided || layout == Layout::permuted_strided;
  // Strided: at most two dims (of extent > 1) get a step of 2 or 3 and a start offset, one more
  // may get a start offset or padding (a narrow); the base stays within ~10x the view's size.
  for (int i = 0; i < r; ++i) pshape[std::size_t(perm[std::size_t(i)])] = shape[i];
  if (strided) {
    std::vector<int> wide;
    for (int j = 0; j < r; ++j)
      if (pshape[std::size_t(j)] > 1) wide.push_back(j);
    std::shuffle(wide.begin(), wide.end(), rng.gen);
    for (std::size_t w = 0; w < wide.size() && w < 3; ++w) {
      std::size_t j = std::size_t(wide[w]);
      if (w < 2) step[j] = rng.integer(w == 0 ? 2 : 1, 3);
      start[j] = rng.integer(0, 2);
      pshape[j] = pshape[j] * step[j] + start[j] + rng.integer(0, 1);
    }
  }
  // A view's assignment writes values, so each view step makes a new handle; std::optional::emplace
  // rebinds.
  std::optional<TensorView<T>> v(random_contiguous<T>(rng, Shape(pshape), d));
  for (int j = 0; j < r; ++j) {
    std::size_t u = std::size_t(j);
    std::int64_t want = shape[int(std::find(perm.begin(), perm.end(), j) - perm.begin())];
    TensorView<T> next = step[u] == 1 && start[u] > 0 ? v->narrow(j, start[u], want)
                                                  : v->slice(j, start[u], start[u] + want * step[u], step[u]);
    v.emplace(std::move(next));
  }
  return v->permute(perm);
}

/// A random layout for an input (any) or a destination (never expanded).
inline Layout random_layout(Rng& rng, bool destination) {
  for (;;) {
    auto l = Layout(rng.integer(0, int(Layout::count) - 1));
    if (!(destination && l == Layout::expanded)) return l;
  }
}

// ---------------------------------------------------------------------------
// Poison: every destination starts as a pattern no kernel produces
// ---------------------------------------------------------------------------

/// Byte pattern of a poisoned element: NaNs with an unusual payload (a computed NaN is the
/// canonical quiet NaN), 0x5A5A... integers (beyond any value the tests produce), 0xA5 bools.
template <class T>
void poison_bytes(unsigned char* p) {
  if constexpr (std::is_same_v<T, float>) {
    std::uint32_t b = 0x7fc5a5a5u;
    std::memcpy(p, &b, 4);
  } else if constexpr (std::is_same_v<T, double>) {
    std::uint64_t b = 0x7ff8a5a5a5a5a5a5ull;
    std::memcpy(p, &b, 8);
  } else if constexpr (std::is_same_v<T, half>) {
    std::uint16_t b = 0x7e5a;
    std::memcpy(p, &b, 2);
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    std::uint16_t b = 0x7fa5;
    std::memcpy(p, &b, 2);
  } else if constexpr (std::is_same_v<T, bool>) {
    *p = 0xA5;
  } else {
    std::memset(p, 0x5A, sizeof(T));
  }
}
template <class T>
bool is_poison(const unsigned char* p) {
  unsigned char q[sizeof(T)];
  poison_bytes<T>(q);
  return std::memcmp(p, q, sizeof(T)) == 0;
}

/// Poisons every element of t's whole storage (also the elements around a view).
template <class T>
void poison(const weft::TensorBase<T>& t) {
  auto* p = static_cast<unsigned char*>(t.storage()->data());
  for (std::int64_t i = 0; i < storage_elements(t); ++i) poison_bytes<T>(p + i * std::int64_t(sizeof(T)));
}

/// Writes `values` (row-major over t's shape) into t's elements through its strides, without weft.
template <class T>
void write_values(const weft::TensorBase<T>& t, const std::vector<double>& values) {
  auto* base = static_cast<unsigned char*>(t.storage()->data());
  std::size_t i = 0;
  for_each_index(t.shape(), [&](const std::vector<std::int64_t>& idx) {
    T v = make_value<T>(values[i++]);
    std::memcpy(base + storage_index(t, idx) * std::int64_t(sizeof(T)), &v, sizeof(T));
  });
}

/// A copy of t's whole storage, to prove later that nothing was written.
template <class T>
std::vector<unsigned char> storage_snapshot(const weft::TensorBase<T>& t) {
  const unsigned char* p = storage_bytes(t);
  return std::vector<unsigned char>(p, p + t.storage()->bytes());
}

/// A destination of `shape` laid out as `layout` (never expanded), with its storage poisoned.
template <class T>
TensorView<T> make_destination(Rng& rng, const Shape& shape, Layout layout) {
  if (layout == Layout::expanded) layout = Layout::contiguous;
  TensorView<T> t = make_view<T>(rng, shape, Domain{}, layout);
  poison(t);
  return t;
}

// ---------------------------------------------------------------------------
// Comparison against a reference
// ---------------------------------------------------------------------------

/// What one output element must be: `want` within `tol` (absolute); NaN wants NaN; an infinite
/// `want` must match exactly. `skip` marks an element whose exact value is ambiguous (e.g. a
/// comparison whose operands are within their error bounds of each other).
struct Expect {
  double want = 0;
  double tol = 0;
  bool skip = false;
};

/// Outcome of checking an output; `text` describes the first few failures.
struct Report {
  std::int64_t checked = 0, skipped = 0, unwritten = 0, wrong = 0, invalid = 0, outside_written = 0;
  double worst_ratio = 0;  // max |got - want| / tol over the checked elements (0 when exact)
  std::string text;
  bool ok() const { return unwritten == 0 && wrong == 0 && invalid == 0 && outside_written == 0; }
};

inline void note(Report& r, const std::string& s) {
  if (std::count(r.text.begin(), r.text.end(), '\n') < 8) r.text += s + "\n";
}

inline std::string index_str(const std::vector<std::int64_t>& idx) {
  std::string s = "(";
  for (std::size_t i = 0; i < idx.size(); ++i) s += (i ? "," : "") + std::to_string(idx[i]);
  return s + ")";
}

inline bool close_enough(double got, double want, double tol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  if (std::isnan(got) || std::isinf(got)) return false;
  return std::fabs(got - want) <= tol;
}

/// Checks every element of `out` against `expect` (row-major over out's shape), that every element
/// was written (no poison left), and that no element of out's storage outside the view was touched.
template <class T>
Report check_output(const weft::TensorBase<T>& out, const std::vector<Expect>& expect) {
  Report r;
  const unsigned char* base = storage_bytes(out);
  std::vector<char> in_view(std::size_t(storage_elements(out)), 0);
  char buf[160];
  std::size_t linear = 0;
  for_each_index(out.shape(), [&](const std::vector<std::int64_t>& idx) {
    const Expect& e = expect[linear++];
    std::int64_t s = storage_index(out, idx);
    in_view[std::size_t(s)] = 1;
    const unsigned char* p = base + s * std::int64_t(sizeof(T));
    if (is_poison<T>(p)) {
      if (++r.unwritten <= 3) note(r, "element " + index_str(idx) + " was never written");
      return;
    }
    bool valid;
    double got = decode<T>(p, &valid);
    if (!valid) {
      if (++r.invalid <= 3) note(r, "element " + index_str(idx) + " holds an invalid bool byte");
      return;
    }
    if (e.skip) {
      ++r.skipped;
      return;
    }
    ++r.checked;
    if (!close_enough(got, e.want, e.tol)) {
      if (++r.wrong <= 5) {
        std::snprintf(buf, sizeof buf, "element %s: got %.17g, want %.17g, |diff| %.3g > tol %.3g",
                      index_str(idx).c_str(), got, e.want, std::fabs(got - e.want), e.tol);
        note(r, buf);
      }
    } else if (std::isfinite(e.want) && std::fabs(got - e.want) > 0) {
      r.worst_ratio = std::max(r.worst_ratio, e.tol > 0 ? std::fabs(got - e.want) / e.tol : 1e300);
    }
  });
  for (std::size_t s = 0; s < in_view.size(); ++s)
    if (!in_view[s] && !is_poison<T>(base + s * sizeof(T)))
      if (++r.outside_written <= 3) note(r, "storage element " + std::to_string(s) + " outside the view was written");
  return r;
}

/// The same with expect(idx) called per element.
template <class T, class F>
  requires std::is_invocable_v<F&, const std::vector<std::int64_t>&>
Report check_output(const weft::TensorBase<T>& out, F&& expect) {
  std::vector<Expect> all;
  all.reserve(std::size_t(out.numel()));
  for_each_index(out.shape(), [&](const std::vector<std::int64_t>& idx) { all.push_back(expect(idx)); });
  return check_output(out, all);
}

/// t's values at every index of `shape` (which t broadcasts to), row-major.
template <class T>
std::vector<double> broadcast_values(const weft::TensorBase<T>& t, const Shape& shape) {
  std::vector<double> out;
  out.reserve(std::size_t(shape.numel()));
  for_each_index(shape, [&](const std::vector<std::int64_t>& idx) { out.push_back(value_at(t, idx)); });
  return out;
}

/// The per-dtype helpers above are instantiated and optimized once per build, in support.cpp,
/// instead of once in every test translation unit (~1.5 s of -O2 each). nvcc's .cu files keep
/// their own copies: their weft calls live in another ABI namespace (WEFT_BACKEND_ABI).
#define WEFT_TEST_SUPPORT_TEMPLATES(EXT, T)                                                        \
  EXT template std::vector<double> values_of<T>(const weft::TensorBase<T>&);                           \
  EXT template Tensor<T> random_contiguous<T>(Rng&, const Shape&, const Domain&);                              \
  EXT template TensorView<T> make_view<T>(Rng&, const Shape&, const Domain&, Layout);                          \
  EXT template void poison<T>(const weft::TensorBase<T>&);                                             \
  EXT template void write_values<T>(const weft::TensorBase<T>&, const std::vector<double>&);           \
  EXT template std::vector<unsigned char> storage_snapshot<T>(const weft::TensorBase<T>&);             \
  EXT template TensorView<T> make_destination<T>(Rng&, const Shape&, Layout);                                  \
  EXT template Report check_output<T>(const weft::TensorBase<T>&, const std::vector<Expect>&);         \
  EXT template std::vector<double> broadcast_values<T>(const weft::TensorBase<T>&, const Shape&);
/// M(EXT, T) for each of the seven dtypes.
#define WEFT_TEST_FOR_EACH_DTYPE(M, EXT) \
  M(EXT, float)                          \
  M(EXT, double)                         \
  M(EXT, half)                           \
  M(EXT, bfloat16)                       \
  M(EXT, std::int32_t)                   \
  M(EXT, std::int64_t)                   \
  M(EXT, bool)
#if !defined(__CUDACC__) && !defined(WEFT_TEST_SUPPORT_DEFINITIONS)
WEFT_TEST_FOR_EACH_DTYPE(WEFT_TEST_SUPPORT_TEMPLATES, extern)
#endif

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft_test

/// Checks a Report with a readable failure message.
#define WEFT_CHECK_REPORT(report)                                                                          \
  do {                                                                                                     \
    const ::weft_test::Report& weft_r_ = (report);                                                         \
    INFO("checked ", weft_r_.checked, ", skipped ", weft_r_.skipped, ", unwritten ", weft_r_.unwritten,    \
         ", wrong ", weft_r_.wrong, ", invalid ", weft_r_.invalid, ", written outside the view ",          \
         weft_r_.outside_written, "\n", weft_r_.text);                                                     \
    CHECK(weft_r_.ok());                                                                                   \
  } while (0)

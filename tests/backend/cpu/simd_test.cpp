// SPDX-License-Identifier: MIT
// weft::simd: packet semantics, exact 16-bit float conversions, and the ulp error
// of the vectorized math against std:: evaluated in a wider type.
//
// Set WEFT_SIMD_ULP_REPORT=1 to print the measured maximum ulp error per function.
#include "weft/backend/cpu/simd/vec.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace {

namespace ws = weft::detail::simd;

// The reference type: std:: in double for float results, in long double for double results.
template <class T>
using wide_t = std::conditional_t<std::is_same_v<T, float>, double, long double>;

template <class T>
using bits_t = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

template <class T>
bits_t<T> bits_of(T x) {
  return std::bit_cast<bits_t<T>>(x);
}

template <class T>
bool same_bits(T a, T b) {
  return bits_of(a) == bits_of(b);
}

// |got - ref| in units in the last place of T at ref (the subnormal spacing below the
// normal range). Matching NaNs, and an infinity where ref rounds to that infinity, are 0;
// a NaN or infinity anywhere else is +inf, except that an overflow to inf next to the
// largest finite value is measured as 2^emax.
template <class T>
double ulp_error(T got, wide_t<T> ref) {
  using W = wide_t<T>;
  constexpr int kMant = std::numeric_limits<T>::digits - 1;
  constexpr int kMinExp = std::numeric_limits<T>::min_exponent - 1;
  if (std::isnan(ref)) return std::isnan(got) ? 0.0 : INFINITY;
  if (std::isnan(got)) return INFINITY;
  T rounded = T(ref);
  if (std::isinf(rounded) && got == rounded) return 0.0;
  if (std::isinf(ref)) return INFINITY;
  W g = got;
  if (std::isinf(got)) g = std::copysign(std::ldexp(W(1), std::numeric_limits<T>::max_exponent), W(got));
  W a = std::fabs(ref);
  int e = a == 0 ? kMinExp : std::max(std::ilogb(a), kMinExp);
  return double(std::fabs(g - ref) / std::ldexp(W(1), e - kMant));
}

template <class T>
std::vector<T> specials() {
  using L = std::numeric_limits<T>;
  return {T(0),        -T(0),        T(1),           T(-1),       T(0.5),       T(-0.5),     T(2),
          L::infinity(), -L::infinity(), L::quiet_NaN(), -L::quiet_NaN(), L::min(), -L::min(), L::denorm_min(),
          -L::denorm_min(), L::min() / 3, -L::min() / 5, L::max(), -L::max(), L::epsilon(), -L::epsilon()};
}

// A deterministic input set: ranges, random bit patterns, listed values.
template <class T>
class Inputs {
 public:
  explicit Inputs(std::uint64_t seed) : rng_(seed) {}

  Inputs& uniform(T lo, T hi, int n) {
    std::uniform_real_distribution<T> d(lo, hi);
    for (int i = 0; i < n; ++i) xs_.push_back(d(rng_));
    return *this;
  }
  // Random bit patterns (every binade equally likely) that are not NaN and lie in [lo, hi].
  Inputs& bits(int n, T lo = -std::numeric_limits<T>::infinity(), T hi = std::numeric_limits<T>::infinity()) {
    for (int i = 0; i < n;) {
      T x = std::bit_cast<T>(bits_t<T>(rng_()));
      if (std::isnan(x) || x < lo || x > hi) continue;
      xs_.push_back(x);
      ++i;
    }
    return *this;
  }
  Inputs& values(const std::vector<T>& v) {
    xs_.insert(xs_.end(), v.begin(), v.end());
    return *this;
  }
  Inputs& with_specials() { return values(specials<T>()); }
  const std::vector<T>& get() const { return xs_; }

 private:
  std::mt19937_64 rng_;
  std::vector<T> xs_;
};

// Counts failed expectations and keeps the first one. Tests check lanes in loops;
// funnelling them into one doctest assertion per test keeps this file quick to compile.
class Tally {
 public:
  [[gnu::noinline]] void expect(bool ok, const char* what, int line) {
    if (!ok && failed_++ == 0) first_ = std::string(what) + " (line " + std::to_string(line) + ")";
  }
  int failed() const { return failed_; }
  const std::string& first() const { return first_; }

 private:
  int failed_ = 0;
  std::string first_;
};
#define EXPECT(tally, ...) (tally).expect(bool(__VA_ARGS__), #__VA_ARGS__, __LINE__)
#define CHECK_TALLY(tally) CHECK_MESSAGE((tally).failed() == 0, (tally).failed(), " failed, first: ", (tally).first())

bool report_enabled() { return std::getenv("WEFT_SIMD_ULP_REPORT") != nullptr; }

// One assertion per measured function, compiled once for every type and lane count.
void check_ulp_bound(const char* name, bool is_float, int lanes, double worst, double worst_x, double worst_got,
                     double bound) {
  char what[160];
  std::snprintf(what, sizeof(what), "%s %s x%d [%s]: max ulp %.3f (bound %.2f), worst at x=%.9g got %.9g", name,
                is_float ? "float" : "double", lanes, ws::kIsaName, worst, bound, worst_x, worst_got);
  if (report_enabled()) MESSAGE(std::string(what));
  INFO(std::string(what));
  CHECK(worst <= bound);
}

template <class T, int N>
struct Pack {
  using type = T;
  static constexpr int lanes = N;
};

// A second lane count besides the native one: half of it, or twice it where half would be one lane.
template <class T>
inline constexpr int kOtherLanes = ws::native_lanes<T> >= 4 ? ws::native_lanes<T> / 2 : ws::native_lanes<T> * 2;

#define WEFT_TEST_PACKS                                                                        \
  Pack<float, ws::native_lanes<float>>, Pack<float, kOtherLanes<float>>,                       \
      Pack<double, ws::native_lanes<double>>, Pack<double, kOtherLanes<double>>

// One functor type per packet function, and one out-of-line call per (function, Vec):
// every use in this file shares that single compiled copy of the inlined math.
#define WEFT_TEST_UNARY(Name, fn)                  \
  struct Name {                                    \
    template <class V>                             \
    V operator()(V v) const {                      \
      return fn(v);                                \
    }                                              \
  };
WEFT_TEST_UNARY(Exp, ws::exp)
WEFT_TEST_UNARY(Expm1, ws::expm1)
WEFT_TEST_UNARY(Sigmoid, ws::sigmoid)
WEFT_TEST_UNARY(Log, ws::log)
WEFT_TEST_UNARY(Log1p, ws::log1p)
WEFT_TEST_UNARY(Sin, ws::sin)
WEFT_TEST_UNARY(Cos, ws::cos)
WEFT_TEST_UNARY(Tanh, ws::tanh)
WEFT_TEST_UNARY(Erf, ws::erf)
WEFT_TEST_UNARY(Sqrt, ws::sqrt)
WEFT_TEST_UNARY(Rsqrt, ws::rsqrt)
WEFT_TEST_UNARY(Floor, ws::floor)
WEFT_TEST_UNARY(Abs, ws::abs)
WEFT_TEST_UNARY(Sign, ws::sign)
#undef WEFT_TEST_UNARY

template <class F, class V>
[[gnu::noinline]] V run(V v) {
  return F{}(v);
}

// Applies F to xs N lanes at a time and checks the worst ulp error against ref.
template <class T, int N, class F, class Ref>
void check_ulp(const char* name, const std::vector<T>& xs, Ref ref, double bound) {
  double worst = 0;
  T worst_x = 0, worst_got = 0;
  T in[N], out[N];
  for (std::size_t i = 0; i < xs.size(); i += N) {
    for (int l = 0; l < N; ++l) in[l] = xs[std::min(i + l, xs.size() - 1)];
    run<F>(ws::Vec<T, N>::load(in)).store(out);
    for (int l = 0; l < N; ++l) {
      double e = ulp_error<T>(out[l], ref(wide_t<T>(in[l])));
      if (!(e <= worst)) {
        worst = e;
        worst_x = in[l];
        worst_got = out[l];
      }
    }
  }
  check_ulp_bound(name, sizeof(T) == 4, N, worst, double(worst_x), double(worst_got), bound);
}

// F of x in every lane; the last lane's result.
template <class T, int N, class F>
T apply1(T x) {
  return run<F>(ws::Vec<T, N>::broadcast(x))[N - 1];
}

}  // namespace

TEST_SUITE("cpu") {

// ---------------------------------------------------------------------------
// Target and packets
// ---------------------------------------------------------------------------

TEST_CASE("simd target constants agree with the ISA macros") {
#if defined(__AVX512F__)
  CHECK(ws::kBytes == 64);
  CHECK(std::string_view(ws::kIsaName) == "avx512");
#elif defined(__AVX2__)
  CHECK(ws::kBytes == 32);
  CHECK(std::string_view(ws::kIsaName) == "avx2");
#elif defined(__SSE2__)
  CHECK(ws::kBytes == 16);
  CHECK(std::string_view(ws::kIsaName) == "sse2");
#elif defined(__ARM_NEON)
  CHECK(ws::kBytes == 16);
  CHECK(std::string_view(ws::kIsaName) == "neon");
#endif
  CHECK(ws::native_lanes<float> * 4 == ws::kBytes);
  CHECK(ws::native_lanes<double> * 8 == ws::kBytes);
  CHECK(ws::native_lanes<std::int32_t> == ws::native_lanes<float>);
  CHECK(ws::Vec<float, 8>::size == 8);
  CHECK(sizeof(ws::Vec<double, 4>) == 32);
}

// The bfloat16 scope (tests/meson.build) keeps only the 16-bit conversions below: the rest is the
// packet code of the armv8-a build.
#if !WEFT_TESTS_BF16_SCOPE
TEST_CASE_TEMPLATE("simd load, store, broadcast and lane access round trip", P, WEFT_TEST_PACKS) {
  Tally t;
  using T = typename P::type;
  constexpr int N = P::lanes;
  T src[2 * N + 1], dst[2 * N + 1];
  for (int i = 0; i < 2 * N + 1; ++i) src[i] = T(i * 3 - 7) / T(4);
  auto v = ws::Vec<T, N>::load(src + 1);  // unaligned
  for (int i = 0; i < N; ++i) EXPECT(t, v[i] == src[i + 1]);
  std::fill(dst, dst + 2 * N + 1, T(-99));
  v.store(dst + 1);
  EXPECT(t, dst[0] == T(-99));
  EXPECT(t, dst[N + 1] == T(-99));
  for (int i = 0; i < N; ++i) EXPECT(t, dst[i + 1] == src[i + 1]);
  auto b = ws::Vec<T, N>::broadcast(-T(0));
  for (int i = 0; i < N; ++i) EXPECT(t, same_bits(b[i], -T(0)));
  CHECK_TALLY(t);
}

TEST_CASE_TEMPLATE("simd stream writes every lane", T, float, double, std::int32_t, std::int64_t) {
  Tally t;
  constexpr int kN = ws::native_lanes<T>;
  auto run = [&t](auto lanes) {
    constexpr int N = decltype(lanes)::value;
    alignas(128) T buf[4 * N];
    std::fill(buf, buf + 4 * N, T(0));
    for (int k = 0; k < 4; ++k) {
      T vals[N];
      for (int i = 0; i < N; ++i) vals[i] = T(k * 100 + i + 1);
      ws::Vec<T, N>::load(vals).stream(buf + k * N);
    }
    ws::stream_fence();
    for (int k = 0; k < 4; ++k)
      for (int i = 0; i < N; ++i) EXPECT(t, buf[k * N + i] == T(k * 100 + i + 1));
  };
  run(std::integral_constant<int, kN>{});      // one register: the non-temporal instruction
  run(std::integral_constant<int, 2 * kN>{});  // two registers
  run(std::integral_constant<int, 2>{});       // two lanes: below a register (a plain store) on most targets
  CHECK_TALLY(t);
}

TEST_CASE_TEMPLATE("simd arithmetic matches scalar arithmetic", P, WEFT_TEST_PACKS) {
  Tally t;
  using T = typename P::type;
  constexpr int N = P::lanes;
  using V = ws::Vec<T, N>;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<T> d(-100, 100);
  for (int rep = 0; rep < 50; ++rep) {
    T a[N], b[N];
    for (int i = 0; i < N; ++i) a[i] = d(rng), b[i] = d(rng);
    V va = V::load(a), vb = V::load(b);
    V sum = va + vb, diff = va - vb, prod = va * vb, quot = va / vb, neg = -va;
    V mixed1 = va * T(3) + T(1), mixed2 = T(2) - vb / T(4);
    V acc = va;
    acc += vb;
    acc *= T(2);
    acc -= T(1);
    acc /= vb;
    for (int i = 0; i < N; ++i) {
      EXPECT(t, sum[i] == a[i] + b[i]);
      EXPECT(t, diff[i] == a[i] - b[i]);
      EXPECT(t, prod[i] == a[i] * b[i]);
      EXPECT(t, quot[i] == a[i] / b[i]);
      EXPECT(t, neg[i] == -a[i]);
      EXPECT(t, mixed1[i] == doctest::Approx(a[i] * T(3) + T(1)));
      EXPECT(t, mixed2[i] == T(2) - b[i] / T(4));
      EXPECT(t, acc[i] == doctest::Approx(((a[i] + b[i]) * T(2) - T(1)) / b[i]));
    }
  }
  CHECK_TALLY(t);
}

TEST_CASE_TEMPLATE("simd integer operators", T, std::int32_t, std::int64_t) {
  Tally t;
  constexpr int N = ws::native_lanes<T>;
  using V = ws::Vec<T, N>;
  std::mt19937_64 rng(11);
  for (int rep = 0; rep < 50; ++rep) {
    T a[N], b[N];
    for (int i = 0; i < N; ++i) {
      a[i] = T(rng());
      b[i] = T(rng() % 1000) + 1;
    }
    V va = V::load(a), vb = V::load(b);
    V r_and = va & vb, r_or = va | vb, r_xor = va ^ vb, r_not = ~va;
    V r_shl = vb << 3, r_sar = va >> 5, r_add = va + vb, r_mul = vb * vb, r_div = va / vb;
    V r_mixed = T(5) - (vb & T(7));
    for (int i = 0; i < N; ++i) {
      EXPECT(t, r_and[i] == (a[i] & b[i]));
      EXPECT(t, r_or[i] == (a[i] | b[i]));
      EXPECT(t, r_xor[i] == (a[i] ^ b[i]));
      EXPECT(t, r_not[i] == ~a[i]);
      EXPECT(t, r_shl[i] == b[i] * 8);
      EXPECT(t, r_sar[i] == (a[i] >> 5));  // arithmetic shift: negative lanes stay negative
      EXPECT(t, r_add[i] == T(std::make_unsigned_t<T>(a[i]) + std::make_unsigned_t<T>(b[i])));
      EXPECT(t, r_mul[i] == b[i] * b[i]);
      EXPECT(t, r_div[i] == a[i] / b[i]);
      EXPECT(t, r_mixed[i] == T(5) - (b[i] & T(7)));
    }
  }
  CHECK_TALLY(t);
}

TEST_CASE_TEMPLATE("simd comparisons follow C++ semantics, NaN included", P, WEFT_TEST_PACKS) {
  Tally t;
  using T = typename P::type;
  constexpr int N = P::lanes;
  using V = ws::Vec<T, N>;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T vals[] = {T(-1), T(0), -T(0), T(2), nan, std::numeric_limits<T>::infinity()};
  for (T x : vals) {
    for (T y : vals) {
      V a = V::broadcast(x), b = V::broadcast(y);
      EXPECT(t, ws::cmp_lt(a, b)[0] == (x < y));
      EXPECT(t, ws::cmp_le(a, b)[0] == (x <= y));
      EXPECT(t, ws::cmp_gt(a, b)[0] == (x > y));
      EXPECT(t, ws::cmp_ge(a, b)[0] == (x >= y));
      EXPECT(t, ws::cmp_eq(a, b)[N - 1] == (x == y));
      EXPECT(t, ws::cmp_ne(a, b)[N - 1] == (x != y));
      EXPECT(t, ws::cmp_lt(a, y)[N - 1] == (x < y));
      auto m = ws::cmp_ne(a, b);
      EXPECT(t, m.raw[0] == ((x != y) ? -1 : 0));  // all ones per set lane
    }
  }
  CHECK_TALLY(t);
}

TEST_CASE_TEMPLATE("simd select, mask logic and mask_to_ones", P, WEFT_TEST_PACKS) {
  Tally t;
  using T = typename P::type;
  constexpr int N = P::lanes;
  using V = ws::Vec<T, N>;
  T a[N], b[N], c[N];
  for (int i = 0; i < N; ++i) {
    a[i] = T(i);
    b[i] = T(100 + i);
    c[i] = T(i % 3);
  }
  V va = V::load(a), vb = V::load(b), vc = V::load(c);
  auto lt = ws::cmp_lt(va, vc);     // false everywhere except never: i < i % 3 is false
  auto odd = ws::cmp_eq(vc, T(1));  // i % 3 == 1
  auto zero = ws::cmp_eq(vc, T(0));
  V s = ws::select(odd, va, vb);
  auto both = ws::mask_and(odd, ws::cmp_gt(va, T(3)));
  auto either = ws::mask_or(odd, zero);
  auto neither = ws::mask_not(either);
  auto exactly_one = ws::mask_xor(odd, ws::cmp_lt(va, T(2)));
  V ones = ws::mask_to_ones(odd);
  auto ones_i = ws::mask_to_ones<std::int32_t>(odd);
  auto ones_d = ws::mask_to_ones<double>(odd);
  for (int i = 0; i < N; ++i) {
    bool is_odd = i % 3 == 1;
    EXPECT(t, s[i] == (is_odd ? a[i] : b[i]));
    EXPECT(t, both[i] == (is_odd && i > 3));
    EXPECT(t, either[i] == (i % 3 != 2));
    EXPECT(t, neither[i] == (i % 3 == 2));
    EXPECT(t, exactly_one[i] == (is_odd != (i < 2)));
    EXPECT(t, ones[i] == (is_odd ? T(1) : T(0)));
    EXPECT(t, ones_i[i] == (is_odd ? 1 : 0));
    EXPECT(t, ones_d[i] == (is_odd ? 1.0 : 0.0));
  }
  EXPECT(t, !(ws::mask_any(lt)));
  EXPECT(t, ws::mask_any(odd));
  EXPECT(t, !(ws::mask_all(odd)));
  EXPECT(t, ws::mask_all(ws::mask_or(either, neither)));
  // select is bitwise: NaN and signed-zero payloads pass through untouched
  V special = V::broadcast(-T(0));
  V picked = ws::select(ws::cmp_eq(va, va), special, vb);
  EXPECT(t, same_bits(picked[N - 1], -T(0)));
  CHECK_TALLY(t);
}

TEST_CASE_TEMPLATE("simd convert is a lane-wise value conversion", P, WEFT_TEST_PACKS) {
  Tally t;
  using T = typename P::type;
  constexpr int N = P::lanes;
  using V = ws::Vec<T, N>;
  using I = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
  const T vals[] = {T(-2.7), T(2.7), T(-0.5), T(0.5), T(123456.9), T(-1e6), T(0), T(7)};
  T in[N];
  for (int i = 0; i < N; ++i) in[i] = vals[i % 8];
  V v = V::load(in);
  auto to_i32 = ws::convert<std::int32_t>(v);
  auto to_i64 = ws::convert<std::int64_t>(v);
  auto to_other = ws::convert<std::conditional_t<sizeof(T) == 4, double, float>>(v);
  auto back = ws::convert<T>(ws::convert<I>(v));
  for (int i = 0; i < N; ++i) {
    EXPECT(t, to_i32[i] == std::int32_t(in[i]));  // truncation toward zero
    EXPECT(t, to_i64[i] == std::int64_t(in[i]));
    EXPECT(t, to_other[i] == decltype(to_other[i])(in[i]));
    EXPECT(t, back[i] == T(I(in[i])));
  }
  auto wide = ws::convert<std::int64_t>(ws::Vec<std::int32_t, N>::broadcast(-5));
  auto narrow = ws::convert<std::int32_t>(ws::Vec<std::int64_t, N>::broadcast((std::int64_t(1) << 40) + 3));
  EXPECT(t, wide[N - 1] == -5);
  EXPECT(t, narrow[0] == 3);
  CHECK_TALLY(t);
}

TEST_CASE_TEMPLATE("simd reductions", P, WEFT_TEST_PACKS) {
  Tally t;
  using T = typename P::type;
  constexpr int N = P::lanes;
  T in[N];
  for (int i = 0; i < N; ++i) in[i] = T((i * 7) % N) - T(3);
  auto v = ws::Vec<T, N>::load(in);
  EXPECT(t, ws::reduce_add(v) == std::accumulate(in, in + N, T(0)));
  EXPECT(t, ws::reduce_min(v) == *std::min_element(in, in + N));
  EXPECT(t, ws::reduce_max(v) == *std::max_element(in, in + N));
  in[N / 2] = std::numeric_limits<T>::quiet_NaN();
  EXPECT(t, std::isnan(ws::reduce_max(ws::Vec<T, N>::load(in))));
  CHECK_TALLY(t);
}

#endif  // !WEFT_TESTS_BF16_SCOPE

// ---------------------------------------------------------------------------
// 16-bit floats
// ---------------------------------------------------------------------------

TEST_CASE_TEMPLATE("simd load_float of every half and bfloat16 bit pattern is exact", L,
                   std::integral_constant<int, 2>, std::integral_constant<int, 4>, std::integral_constant<int, 8>,
                   std::integral_constant<int, 16>, std::integral_constant<int, 32>) {
  constexpr int N = L::value;
  std::vector<weft::half> h(65536);
  std::vector<weft::bfloat16> b(65536);
  for (int i = 0; i < 65536; ++i) {
    h[i] = weft::half::from_bits(std::uint16_t(i));
    b[i] = weft::bfloat16::from_bits(std::uint16_t(i));
  }
  int bad_half = 0, bad_bf16 = 0;
  for (int i = 0; i < 65536; i += N) {
    auto fh = ws::load_float<N>(h.data() + i);
    auto fb = ws::load_float<N>(b.data() + i);
    for (int l = 0; l < N; ++l) {
      bad_half += !same_bits(fh[l], float(h[i + l]));
      bad_bf16 += !same_bits(fb[l], float(b[i + l]));
    }
  }
  CHECK(bad_half == 0);
  CHECK(bad_bf16 == 0);
}

namespace {

// Floats that stress rounding to a 16-bit format: random bit patterns (NaNs included), every
// midpoint between neighbouring 16-bit values and the floats next to it, and the edges.
template <class H>
std::vector<float> rounding_inputs() {
  std::vector<float> xs;
  std::mt19937_64 rng(3);
  for (int i = 0; i < 100000; ++i) xs.push_back(std::bit_cast<float>(std::uint32_t(rng())));
  for (int i = 0; i < 0xffff; ++i) {
    float lo = H::from_bits(std::uint16_t(i)), hi = H::from_bits(std::uint16_t(i + 1));
    if (!std::isfinite(lo) || !std::isfinite(hi) || (i & 0x7fff) == 0x7fff) continue;
    float mid = lo + (hi - lo) / 2;  // exact: one more bit than the 16-bit format
    xs.insert(xs.end(), {mid, std::nextafter(mid, -INFINITY), std::nextafter(mid, INFINITY)});
  }
  for (std::uint32_t bits : {0x7f800001u, 0x7fc00000u, 0xffc00001u, 0x7fa00000u, 0x7f802000u, 0xffffffffu,
                             0x7f800000u, 0xff800000u, 0x00000001u, 0x80000001u, 0x007fffffu, 0x33000000u,
                             0x33000001u, 0x32ffffffu, 0x387fe000u, 0x38800000u, 0x477fefffu, 0x477ff000u,
                             0x477fffffu, 0x47800000u, 0x7f7fffffu, 0x3f800000u, 0x80000000u}) {
    xs.push_back(std::bit_cast<float>(bits));
  }
  for (float f : {65504.0f, 65519.99f, 65520.0f, 1e10f, -65520.0f, 5.9604645e-08f, 2.9802322e-08f, 1e-40f})
    xs.push_back(f);
  return xs;
}

// Stores xs through store_float<N>; the number of results that differ from H(float).
template <class H, int N>
int store_float_mismatches(const std::vector<float>& xs) {
  std::vector<H> out(xs.size());
  for (std::size_t i = 0; i + N <= xs.size(); i += N) ws::store_float(out.data() + i, ws::Vec<float, N>::load(&xs[i]));
  int bad = 0;
  for (std::size_t i = 0; i + N <= xs.size(); ++i) bad += out[i].bits != H(xs[i]).bits;
  return bad;
}

}  // namespace

TEST_CASE_TEMPLATE("simd store_float rounds to half and bfloat16 bit-identically", L, std::integral_constant<int, 2>,
                   std::integral_constant<int, 4>, std::integral_constant<int, 8>, std::integral_constant<int, 16>,
                   std::integral_constant<int, 32>) {
  constexpr int N = L::value;
  static const std::vector<float> half_inputs = rounding_inputs<weft::half>();
  static const std::vector<float> bf16_inputs = rounding_inputs<weft::bfloat16>();
  CHECK(store_float_mismatches<weft::half, N>(half_inputs) == 0);
  CHECK(store_float_mismatches<weft::bfloat16, N>(bf16_inputs) == 0);
}

#if WEFT_SIMD_NEON_BF16
namespace {

// store_float_mismatches<bfloat16, N> with FPCR set to `fpcr` (restored after), and how many of
// xs BFCVTN itself converts differently from bfloat16(float) under that FPCR. Out of line, so
// that no conversion moves across the FPCR writes (GCC does not order float code after them).
template <int N>
__attribute__((noinline)) void store_under_fpcr(std::uint64_t fpcr, const std::vector<float>& xs, int& mismatches,
                                                int& bfcvtn_differs) {
  const std::uint64_t saved = __builtin_aarch64_get_fpcr64();
  __builtin_aarch64_set_fpcr64(fpcr);
  mismatches = store_float_mismatches<weft::bfloat16, N>(xs);
  bfcvtn_differs = 0;
  for (float x : xs) {
    const bfloat16x4_t r = vcvt_bf16_f32(vdupq_n_f32(x));
    bfcvtn_differs += vget_lane_u16(vreinterpret_u16_bf16(r), 0) != weft::bfloat16(x).bits;
  }
  __builtin_aarch64_set_fpcr64(saved);
}

}  // namespace

// BFCVTN follows FPCR (rounding mode, flush-to-zero, default NaN); store_float must not. At
// Linux's initial FPCR (0) it is exact for every input; with FZ, DN or another rounding mode
// BFCVTN alone gets some of the inputs wrong (checked, so this case tests the fallback), and
// store_float, which then takes the integer path, still gives bfloat16(float)'s bits.
TEST_CASE_TEMPLATE("simd store_float to bfloat16 is exact whatever FPCR says (BFCVTN builds)", L,
                   std::integral_constant<int, 4>, std::integral_constant<int, 8>) {
  constexpr int N = L::value;
  static const std::vector<float> xs = rounding_inputs<weft::bfloat16>();
  CHECK(std::string_view(ws::kBfloat16Conversion) == "neon-bf16");
  constexpr std::uint64_t kFz = 1u << 24, kDn = 1u << 25, kRoundUp = 1u << 22, kRoundZero = 3u << 22;
  for (std::uint64_t fpcr : {std::uint64_t(0), kFz, kDn, kRoundUp, kRoundZero, kFz | kDn}) {
    int mismatches = -1, bfcvtn_differs = -1;
    store_under_fpcr<N>(fpcr, xs, mismatches, bfcvtn_differs);
    INFO("FPCR ", fpcr, ": BFCVTN alone differs on ", bfcvtn_differs, " inputs");
    CHECK(mismatches == 0);
    CHECK((fpcr == 0 ? bfcvtn_differs == 0 : bfcvtn_differs > 0));
  }
}
#endif

#if !WEFT_TESTS_BF16_SCOPE
// ---------------------------------------------------------------------------
// Math: ulp error against std::
// ---------------------------------------------------------------------------

TEST_CASE_TEMPLATE("simd exp, expm1, sigmoid", P, WEFT_TEST_PACKS) {
  Tally t;
  using T = typename P::type;
  constexpr int N = P::lanes;
  constexpr bool kF32 = std::is_same_v<T, float>;
  const T kMaxArg = kF32 ? T(89) : T(710), kUnderflow = kF32 ? T(-104) : T(-746);
  const T kSubnormal = kF32 ? T(-87.4) : T(-708.4);  // exp below this is subnormal
  auto xs = Inputs<T>(1)
                .uniform(kUnderflow - 2, kMaxArg + 1, 20000)
                .uniform(kUnderflow, kSubnormal, 5000)
                .uniform(-1, 1, 5000)
                .bits(5000)
                .with_specials()
                .values({kMaxArg, kUnderflow, kF32 ? T(88.72283) : T(709.7827), kF32 ? T(-100) : T(-740)})
                .get();
  check_ulp<T, N, Exp>("exp", xs, [](auto x) { return std::exp(x); }, 1.5);
  check_ulp<T, N, Expm1>("expm1", xs, [](auto x) { return std::expm1(x); },
                  kF32 ? 2.0 : 2.5);
  auto small = Inputs<T>(2).uniform(-1, 1, 20000).bits(10000, T(-1e-3), T(1e-3)).get();
  check_ulp<T, N, Expm1>("expm1 |x|<1", small, [](auto x) { return std::expm1(x); }, kF32 ? 2.0 : 2.5);
  check_ulp<T, N, Sigmoid>("sigmoid", xs, [](auto x) { return 1 / (1 + std::exp(-x)); }, 3.0);

  EXPECT(t, apply1<T, N, Exp>(std::numeric_limits<T>::infinity()) == std::numeric_limits<T>::infinity());
  EXPECT(t, same_bits(apply1<T, N, Exp>(-std::numeric_limits<T>::infinity()), T(0)));
  EXPECT(t, same_bits(apply1<T, N, Expm1>(-T(0)), -T(0)));
  EXPECT(t, apply1<T, N, Expm1>(-std::numeric_limits<T>::infinity()) == T(-1));
  T e100 = apply1<T, N, Exp>(kF32 ? T(-100) : T(-740));
  EXPECT(t, std::fpclassify(e100) == FP_SUBNORMAL);
  EXPECT(t, apply1<T, N, Sigmoid>(T(-1000)) == T(0));
  EXPECT(t, apply1<T, N, Sigmoid>(T(1000)) == T(1));
  CHECK_TALLY(t);
}

TEST_CASE_TEMPLATE("simd log, log1p", P, WEFT_TEST_PACKS) {
  Tally t;
  using T = typename P::type;
  constexpr int N = P::lanes;
  using L = std::numeric_limits<T>;
  auto xs = Inputs<T>(3)
                .bits(20000, T(0))  // every binade, subnormals included
                .uniform(T(0.5), T(2), 10000)
                .uniform(T(0.9), T(1.1), 5000)
                .with_specials()
                .values({T(-2), L::denorm_min() * 3})
                .get();
  check_ulp<T, N, Log>("log", xs, [](auto x) { return std::log(x); }, 1.5);
  auto ys = Inputs<T>(4)
                .uniform(-1, 1, 20000)
                .bits(10000, T(-1e-3), T(1e-3))
                .bits(10000, T(-1))
                .uniform(T(-1), T(-0.5), 5000)
                .with_specials()
                .values({T(-1) + L::epsilon() / 2, T(-2)})
                .get();
  check_ulp<T, N, Log1p>("log1p", ys, [](auto x) { return std::log1p(x); },
                  std::is_same_v<T, float> ? 2.0 : 1.5);

  EXPECT(t, apply1<T, N, Log>(T(0)) == -L::infinity());
  EXPECT(t, apply1<T, N, Log>(-T(0)) == -L::infinity());
  EXPECT(t, std::isnan(apply1<T, N, Log>(T(-1))));
  EXPECT(t, std::isnan(apply1<T, N, Log>(-L::denorm_min())));
  EXPECT(t, apply1<T, N, Log>(L::infinity()) == L::infinity());
  EXPECT(t, apply1<T, N, Log>(T(1)) == T(0));
  EXPECT(t, same_bits(apply1<T, N, Log1p>(-T(0)), -T(0)));
  EXPECT(t, apply1<T, N, Log1p>(T(-1)) == -L::infinity());
  CHECK_TALLY(t);
}

TEST_CASE_TEMPLATE("simd sin, cos", P, WEFT_TEST_PACKS) {
  Tally t;
  using T = typename P::type;
  constexpr int N = P::lanes;
  auto xs = Inputs<T>(5)
                .uniform(-10, 10, 20000)
                .uniform(-1e4, 1e4, 20000)
                .bits(5000, T(-1e4), T(1e4))
                .with_specials()
                .values({T(1.5707963267948966), T(3.141592653589793), T(-4.71238898038469)})
                .get();
  double bound = std::is_same_v<T, float> ? 2.0 : 3.0;
  check_ulp<T, N, Sin>("sin", xs, [](auto x) { return std::sin(x); }, bound);
  check_ulp<T, N, Cos>("cos", xs, [](auto x) { return std::cos(x); }, bound);
  // Beyond 1e4 the bound still holds while the reduction is exact (|x| < 1e8); past that,
  // lanes go to std::sin / std::cos of T itself.
  auto far = Inputs<T>(6).uniform(T(1e4), T(1e8), 5000).uniform(T(-1e8), T(-1e4), 5000).get();
  check_ulp<T, N, Sin>("sin |x|<1e8", far, [](auto x) { return std::sin(x); }, bound);
  check_ulp<T, N, Cos>("cos |x|<1e8", far, [](auto x) { return std::cos(x); }, bound);
  auto huge = Inputs<T>(7).bits(5000, T(1e8)).bits(5000, -std::numeric_limits<T>::max(), T(-1e8)).get();
  int insane = 0;
  for (std::size_t i = 0; i + N <= huge.size(); i += N) {
    auto v = ws::Vec<T, N>::load(&huge[i]);
    auto s = run<Sin>(v), c = run<Cos>(v);
    for (int l = 0; l < N; ++l) {
      insane += !(s[l] == std::sin(huge[i + l]) && c[l] == std::cos(huge[i + l]));
    }
  }
  EXPECT(t, insane == 0);
  EXPECT(t, same_bits(apply1<T, N, Sin>(-T(0)), -T(0)));
  EXPECT(t, apply1<T, N, Cos>(T(0)) == T(1));
  EXPECT(t, std::isnan(apply1<T, N, Sin>(std::numeric_limits<T>::infinity())));
  CHECK_TALLY(t);
}

TEST_CASE_TEMPLATE("simd tanh, erf", P, WEFT_TEST_PACKS) {
  Tally t;
  using T = typename P::type;
  constexpr int N = P::lanes;
  auto xs = Inputs<T>(8)
                .uniform(-10, 10, 20000)
                .uniform(-1, 1, 10000)
                .uniform(-5, 5, 10000)
                .bits(10000)
                .with_specials()
                .get();
  check_ulp<T, N, Tanh>("tanh", xs, [](auto x) { return std::tanh(x); }, 3.0);
  check_ulp<T, N, Erf>("erf", xs, [](auto x) { return std::erf(x); }, 2.0);
  EXPECT(t, same_bits(apply1<T, N, Tanh>(-T(0)), -T(0)));
  EXPECT(t, same_bits(apply1<T, N, Erf>(-T(0)), -T(0)));
  EXPECT(t, apply1<T, N, Tanh>(-std::numeric_limits<T>::infinity()) == T(-1));
  EXPECT(t, apply1<T, N, Erf>(std::numeric_limits<T>::infinity()) == T(1));
  CHECK_TALLY(t);
}

TEST_CASE_TEMPLATE("simd sqrt, rsqrt", P, WEFT_TEST_PACKS) {
  Tally t;
  using T = typename P::type;
  constexpr int N = P::lanes;
  auto xs = Inputs<T>(9).bits(20000).uniform(0, 4, 5000).with_specials().get();
  check_ulp<T, N, Sqrt>("sqrt", xs, [](auto x) { return std::sqrt(x); }, 0.501);
  check_ulp<T, N, Rsqrt>("rsqrt", xs, [](auto x) { return 1 / std::sqrt(x); }, 2.0);
  EXPECT(t, same_bits(apply1<T, N, Sqrt>(-T(0)), -T(0)));
  CHECK_TALLY(t);
}

TEST_CASE_TEMPLATE("simd pow", P, WEFT_TEST_PACKS) {
  Tally t;
  using T = typename P::type;
  constexpr int N = P::lanes;
  using V = ws::Vec<T, N>;
  using L = std::numeric_limits<T>;
  // Random bases and exponents, and negative bases with integer exponents.
  std::mt19937_64 rng(10);
  std::uniform_real_distribution<T> base(0, 10), expo(-30, 30), tiny(0, T(1e-3));
  std::vector<T> xs, ys;
  for (int i = 0; i < 20000; ++i) {
    xs.push_back(i % 4 == 3 ? tiny(rng) : base(rng));
    ys.push_back(expo(rng));
    xs.push_back(-base(rng));
    ys.push_back(std::round(expo(rng)));
  }
  // Special cases (C99 F.9.4.4 / std::pow): zero, one, infinities, NaN, odd / even / non-integer exponents.
  const T sx[] = {T(0), -T(0), T(1), T(-1), T(2), T(-2), T(0.5), T(-0.5), T(-3), L::infinity(), -L::infinity(),
                  L::quiet_NaN(), L::min(), L::max()};
  const T sy[] = {T(0), -T(0), T(1), T(-1), T(2), T(3), T(-3), T(0.5), T(-0.5), T(1.5), L::infinity(),
                  -L::infinity(), L::quiet_NaN(), T(1e10), T(-1e10), T(2) / L::epsilon() + 1};
  for (T x : sx)
    for (T y : sy) {
      xs.push_back(x);
      ys.push_back(y);
    }
  double worst = 0;
  T worst_x = 0, worst_y = 0, worst_got = 0;
  int bad_specials = 0;
  for (std::size_t i = 0; i < xs.size(); i += N) {
    T in_x[N], in_y[N];
    for (int l = 0; l < N; ++l) {
      in_x[l] = xs[std::min(i + l, xs.size() - 1)];
      in_y[l] = ys[std::min(i + l, ys.size() - 1)];
    }
    V r = ws::pow(V::load(in_x), V::load(in_y));
    for (int l = 0; l < N; ++l) {
      wide_t<T> ref = std::pow(wide_t<T>(in_x[l]), wide_t<T>(in_y[l]));
      double e = ulp_error<T>(r[l], ref);
      if (!(e <= worst)) {
        worst = e;
        worst_x = in_x[l];
        worst_y = in_y[l];
        worst_got = r[l];
      }
      // zeros and infinities also carry the right sign
      if ((ref == 0 || std::isinf(ref)) && !same_bits(r[l], T(ref))) ++bad_specials;
    }
  }
  INFO("pow exponent of the worst case: ", worst_y);
  check_ulp_bound("pow", sizeof(T) == 4, N, worst, double(worst_x), double(worst_got), 1.0);
  EXPECT(t, bad_specials == 0);
  EXPECT(t, ws::pow(V::broadcast(T(2)), T(10))[0] == T(1024));
  CHECK_TALLY(t);
}

// ---------------------------------------------------------------------------
// Math: exact functions and semantics
// ---------------------------------------------------------------------------

TEST_CASE_TEMPLATE("simd floor matches std::floor bit for bit", P, WEFT_TEST_PACKS) {
  Tally t;
  using T = typename P::type;
  constexpr int N = P::lanes;
  using L = std::numeric_limits<T>;
  const T two_pow_mant = T(1) / L::epsilon();  // from here up every T is an integer
  auto xs = Inputs<T>(12)
                .bits(20000)
                .uniform(-10, 10, 10000)
                .with_specials()
                .values({T(-0.25), T(0.75), T(-2.5), T(2.5), two_pow_mant, two_pow_mant - T(0.5),
                         T(0.5) - two_pow_mant, -two_pow_mant - 1, T(-1e-30)})
                .get();
  int bad = 0;
  for (std::size_t i = 0; i + N <= xs.size(); i += N) {
    auto r = run<Floor>(ws::Vec<T, N>::load(&xs[i]));
    for (int l = 0; l < N; ++l) {
      T want = std::floor(xs[i + l]);
      bad += !(same_bits(r[l], want) || (std::isnan(r[l]) && std::isnan(want)));
    }
  }
  EXPECT(t, bad == 0);
  CHECK_TALLY(t);
}

TEST_CASE_TEMPLATE("simd abs, min, max, sign semantics", P, WEFT_TEST_PACKS) {
  Tally t;
  using T = typename P::type;
  constexpr int N = P::lanes;
  using V = ws::Vec<T, N>;
  using L = std::numeric_limits<T>;
  const T nan = L::quiet_NaN();
  const T vals[] = {T(-3), T(-0.5), -T(0), T(0), T(2), L::infinity(), -L::infinity(), nan, L::denorm_min()};
  for (T x : vals) {
    V vx = V::broadcast(x);
    T a = ws::abs(vx)[0];
    EXPECT(t, (same_bits(a, std::fabs(x)) || (std::isnan(a) && std::isnan(x))));
    // torch.sign: (x > 0) - (x < 0); sign(NaN) = 0 and sign(-0) = +0
    T s = ws::sign(vx)[N - 1];
    EXPECT(t, same_bits(s, x > 0 ? T(1) : x < 0 ? T(-1) : T(0)));
    for (T y : vals) {
      V vy = V::broadcast(y);
      T mx = ws::max(vx, vy)[0], mn = ws::min(vx, vy)[N - 1];
      if (std::isnan(x) || std::isnan(y)) {
        EXPECT(t, std::isnan(mx));
        EXPECT(t, std::isnan(mn));
      } else if (x == y) {
        EXPECT(t, same_bits(mx, std::signbit(x) && std::signbit(y) ? x : std::fabs(x)));  // max(-0, +0) = +0
        EXPECT(t, same_bits(mn, std::signbit(x) || std::signbit(y) ? -std::fabs(x) : x));  // min(-0, +0) = -0
      } else {
        EXPECT(t, mx == std::max(x, y));
        EXPECT(t, mn == std::min(x, y));
      }
    }
  }
  CHECK_TALLY(t);
}

TEST_CASE_TEMPLATE("simd integer abs, min, max, sign", T, std::int32_t, std::int64_t) {
  Tally t;
  constexpr int N = ws::native_lanes<T>;
  using V = ws::Vec<T, N>;
  std::mt19937_64 rng(13);
  for (int rep = 0; rep < 100; ++rep) {
    T a[N], b[N];
    for (int i = 0; i < N; ++i) {
      a[i] = T(rng() >> 2) * (rng() & 1 ? 1 : -1);
      b[i] = T(rng() >> 2) * (rng() & 1 ? 1 : -1);
    }
    a[0] = 0;
    V va = V::load(a), vb = V::load(b);
    V ab = ws::abs(va), mn = ws::min(va, vb), mx = ws::max(va, vb), sg = ws::sign(va);
    for (int i = 0; i < N; ++i) {
      EXPECT(t, ab[i] == (a[i] < 0 ? -a[i] : a[i]));
      EXPECT(t, mn[i] == std::min(a[i], b[i]));
      EXPECT(t, mx[i] == std::max(a[i], b[i]));
      EXPECT(t, sg[i] == T((a[i] > 0) - (a[i] < 0)));
    }
  }
  CHECK_TALLY(t);
}
#endif  // !WEFT_TESTS_BF16_SCOPE

}  // TEST_SUITE("cpu")

// SPDX-License-Identifier: MIT
/// @file cpu: pointwise expressions, casts and reductions on int8, uint8 and int16 against int64 / double
/// references with two's complement wrap-around applied (PyTorch's CPU results): overflowing + - * and
/// negation, comparisons and maxima that see the wrapped value, mixed promotion (int8 + uint8 -> int16),
/// int numbers that wrap to the tensor's dtype, true division in float, casts from every dtype
/// (float -> int8 truncates, then wraps: defined for |x| < 2^31), sum / prod in int64, foreach_norm in float.
///
/// Inputs span each dtype's whole range. Every byte value is a valid int8 or uint8, so no poison
/// marks an unwritten element: each statement runs twice, into destinations filled with two
/// different values, and an element never written fails the run whose fill differs from its value.
/// Shapes: 1037 elements (packets and a scalar tail), a transposed operand, a broadcast row.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <weft/weft.hpp>

#include "error_check.hpp"
#include "reference.hpp"

using namespace weft_test;

namespace {

/// Random elements over T's whole range (fresh each call).
template <class T>
weft::Tensor<T> random_ints(Rng& rng, const weft::Shape& shape) {
  std::vector<T> v(std::size_t(shape.numel()));
  for (T& x : v) x = T(rng.integer(std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max()));
  return weft::from_vector<T>(v, shape);
}

/// The elements of a host tensor or view, row-major through its strides, decoded by the test.
template <class T>
std::vector<double> elements(const weft::TensorBase<T>& t) {
  return values_of(t);
}

/// Runs `assign(y)` (which writes a statement into y) into destinations of `shape` filled with two
/// different values (0 and 1: distinct in every dtype, bool too), and checks every element against
/// want[i] exactly (NaN where NaN is wanted: 0 / 0 in float).
template <class R, class Assign>
void check_statement(const std::string& what, const weft::Shape& shape, const std::vector<double>& want, Assign assign) {
  INFO(what);
  REQUIRE(std::int64_t(want.size()) == shape.numel());
  for (double fill : {0.0, 1.0}) {
    weft::Tensor<R> y = weft::full<R>(shape, R(fill));
    assign(y);
    const std::vector<double> got = elements(y);
    std::int64_t wrong = 0, first = -1;
    for (std::size_t i = 0; i < want.size(); ++i)
      if (got[i] != want[i] && !(std::isnan(got[i]) && std::isnan(want[i])) && wrong++ == 0) first = std::int64_t(i);
    INFO("fill ", fill, ": ", wrong, " of ", want.size(), " wrong; first at ", first, ": got ",
         first >= 0 ? got[std::size_t(first)] : 0.0, ", want ", first >= 0 ? want[std::size_t(first)] : 0.0);
    CHECK(wrong == 0);
  }
}

/// Element-wise reference over two equally long value lists.
std::vector<double> zip(const std::vector<double>& a, const std::vector<double>& b,
                        const std::function<double(double, double)>& f) {
  std::vector<double> out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = f(a[i], b[i]);
  return out;
}
std::vector<double> map(const std::vector<double>& a, const std::function<double(double)>& f) {
  std::vector<double> out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = f(a[i]);
  return out;
}

double c_fmod(double a, double b) { return b == 0 ? 0 : a - std::trunc(a / b) * b; }
double floor_mod(double a, double b) { return b == 0 ? 0 : a - std::floor(a / b) * b; }

/// The statements over two tensors a, b of dtype T and shape `shape` (b may be a transposed view).
template <class T, class A, class B>
void check_arithmetic(const std::string& tag, const A& a, const B& b, const weft::Shape& shape) {
  const std::vector<double> va = elements(a), vb = elements(b);
  auto w = [](double v) { return wrapped<T>(v); };
  check_statement<T>(tag + ": a + b", shape, zip(va, vb, [&](double x, double y) { return w(x + y); }),
                     [&](auto& y) { y = a + b; });
  check_statement<T>(tag + ": a - b", shape, zip(va, vb, [&](double x, double y) { return w(x - y); }),
                     [&](auto& y) { y = a - b; });
  check_statement<T>(tag + ": a * b", shape, zip(va, vb, [&](double x, double y) { return w(x * y); }),
                     [&](auto& y) { y = a * b; });
  check_statement<T>(tag + ": -a", shape, map(va, [&](double x) { return w(-x); }), [&](auto& y) { y = -a; });
  check_statement<T>(tag + ": abs(a)", shape, map(va, [&](double x) { return w(std::fabs(x)); }),
                     [&](auto& y) { y = weft::abs(a); });
  check_statement<T>(tag + ": square(a)", shape, map(va, [&](double x) { return w(x * x); }),
                     [&](auto& y) { y = weft::square(a); });
  check_statement<T>(tag + ": sign(a)", shape, map(va, [](double x) { return double((x > 0) - (x < 0)); }),
                     [&](auto& y) { y = weft::sign(a); });
  check_statement<T>(tag + ": maximum(a + b, a) (the wrapped sum)", shape,
                     zip(va, vb, [&](double x, double y) { return std::max(w(x + y), x); }),
                     [&](auto& y) { y = weft::maximum(a + b, a); });
  check_statement<T>(tag + ": minimum(a, b)", shape, zip(va, vb, [](double x, double y) { return std::min(x, y); }),
                     [&](auto& y) { y = weft::minimum(a, b); });
  check_statement<T>(tag + ": clamp(a * b, 10, 100)", shape,
                     zip(va, vb, [&](double x, double y) { return std::min(std::max(w(x * y), 10.0), 100.0); }),
                     [&](auto& y) { y = weft::clamp(a * b, 10, 100); });
  check_statement<T>(tag + ": where(a < b, a - b, b)", shape,
                     zip(va, vb, [&](double x, double y) { return x < y ? w(x - y) : y; }),
                     [&](auto& y) { y = weft::where(a < b, a - b, b); });
  check_statement<bool>(tag + ": a + b > a (compares the wrapped sum)", shape,
                        zip(va, vb, [&](double x, double y) { return double(w(x + y) > x); }),
                        [&](auto& y) { y = a + b > a; });
  check_statement<bool>(tag + ": a == b * 1", shape, zip(va, vb, [](double x, double y) { return double(x == y); }),
                        [&](auto& y) { y = a == b * 1; });
  // A number keeps the tensor's dtype and wraps to it (torch: uint8 + 300 -> + 44).
  check_statement<T>(tag + ": a + 300", shape, map(va, [&](double x) { return w(x + w(300)); }),
                     [&](auto& y) { y = a + 300; });
  check_statement<T>(tag + ": fmod(a, b)", shape, zip(va, vb, c_fmod), [&](auto& y) { y = weft::fmod(a, b); });
  check_statement<T>(tag + ": remainder(a, b)", shape, zip(va, vb, floor_mod),
                     [&](auto& y) { y = weft::remainder(a, b); });
  // True division in float32: the exact quotient rounded once.
  check_statement<float>(tag + ": a / b", shape,
                         zip(va, vb, [](double x, double y) { return double(float(x) / float(y)); }),
                         [&](auto& y) { y = a / b; });
}

template <class T>
void check_dtype(const char* tag) {
  WEFT_TEST_RNG(rng);
  const weft::Shape shape{1037};
  const weft::Tensor<T> a = random_ints<T>(rng, shape), b = random_ints<T>(rng, shape);
  check_arithmetic<T>(std::string(tag) + " contiguous", a, b, shape);
  // A transposed operand (a strided read) and a broadcast row.
  const weft::Tensor<T> m = random_ints<T>(rng, {29, 13}), m2 = random_ints<T>(rng, {29, 13});
  const weft::Tensor<T> row = random_ints<T>(rng, {29});
  check_arithmetic<T>(std::string(tag) + " transposed", m.transpose(0, 1), m2.transpose(0, 1), {13, 29});
  check_arithmetic<T>(std::string(tag) + " broadcast row", m.transpose(0, 1), row.unsqueeze(0).expand({13, 29}),
                      {13, 29});
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("narrow ints: int8 arithmetic wraps as torch") { check_dtype<std::int8_t>("int8"); }
TEST_CASE("narrow ints: uint8 arithmetic wraps as torch") { check_dtype<std::uint8_t>("uint8"); }
TEST_CASE("narrow ints: int16 arithmetic wraps as torch") { check_dtype<std::int16_t>("int16"); }

TEST_CASE("narrow ints: mixed dtypes promote as torch and compute in the promoted dtype") {
  WEFT_TEST_RNG(rng);
  const weft::Shape shape{1037};
  const auto a8 = random_ints<std::int8_t>(rng, shape);
  const auto u8 = random_ints<std::uint8_t>(rng, shape);
  const auto i16 = random_ints<std::int16_t>(rng, shape);
  std::vector<std::int32_t> mid(std::size_t(shape.numel()));  // |x| < 2^23: int8 * x stays inside int32
  for (std::int32_t& x : mid) x = std::int32_t(rng.integer(-(1 << 23), 1 << 23));
  const auto i32 = weft::from_vector<std::int32_t>(mid, shape);
  const std::vector<double> va = elements(a8), vu = elements(u8), v16 = elements(i16), v32 = elements(i32);
  auto w16 = [](double v) { return wrapped<std::int16_t>(v); };
  // int8 + uint8 -> int16: -128 .. 382 fits; the product of two bytes wraps in int16.
  check_statement<std::int16_t>("int8 + uint8", shape, zip(va, vu, [&](double x, double y) { return w16(x + y); }),
                                [&](auto& y) { y = a8 + u8; });
  check_statement<std::int16_t>("int8 * uint8 * uint8", shape,
                                zip(va, vu, [&](double x, double y) { return w16(w16(x * y) * y); }),
                                [&](auto& y) { y = a8 * u8 * u8; });
  check_statement<std::int16_t>("uint8 - int16", shape, zip(vu, v16, [&](double x, double y) { return w16(x - y); }),
                                [&](auto& y) { y = u8 - i16; });
  check_statement<std::int32_t>("int8 * int32", shape,
                                zip(va, v32, [](double x, double y) { return x * y; }),
                                [&](auto& y) { y = a8 * i32; });
  check_statement<float>("int8 + 0.5 (a float number makes float32)", shape, map(va, [](double x) { return x + 0.5; }),
                         [&](auto& y) { y = a8 + 0.5; });
  check_statement<std::int64_t>("(bool + int number: int64) + uint8", shape,
                                zip(va, vu, [](double x, double y) { return double(x < 0) + 7 + y; }),
                                [&](auto& y) { y = (a8 < 0) + 7 + u8; });
  check_statement<std::uint8_t>("uint8 + bool stays uint8 (255 + true wraps to 0)", shape,
                                zip(va, vu, [](double x, double y) { return wrapped<std::uint8_t>(y + double(x < 0)); }),
                                [&](auto& y) { y = u8 + (a8 < 0); });
}

TEST_CASE("narrow ints: casts to and from every dtype") {
  WEFT_TEST_RNG(rng);
  const weft::Shape shape{1037};
  // Floats in (-2^31, 2^31): truncated toward zero, then wrapped (torch's CPU casts: 300.0 -> int8 44).
  std::vector<double> xs(std::size_t(shape.numel()));
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double magnitude = std::ldexp(1.0, int(rng.integer(0, 30)));
    xs[i] = rng.uniform(-magnitude, magnitude);
  }
  std::vector<float> fs(xs.begin(), xs.end());
  const weft::Tensor<float> f = weft::from_vector<float>(fs, shape);
  const weft::Tensor<double> d = weft::from_vector<double>(xs, shape);
  const std::vector<double> vf = elements(f);
  auto from_floats = [&]<class T>(std::type_identity<T>, const char* tag) {
    check_statement<T>(std::string("cast<") + tag + ">(float32)", shape,
                       map(vf, [](double x) { return wrapped<T>(std::trunc(x)); }),
                       [&](auto& y) { y = weft::cast<T>(f); });
    check_statement<T>(std::string("cast<") + tag + ">(float64)", shape,
                       map(xs, [](double x) { return wrapped<T>(std::trunc(x)); }),
                       [&](auto& y) { y = weft::cast<T>(d); });
    // Through float16 and bfloat16 (a float math value each).
    const weft::Tensor<weft::half> h = weft::eval(weft::cast<weft::half>(f * (1.0f / 65536)));  // |x| < 2^14
    check_statement<T>(std::string("cast<") + tag + ">(float16)", shape,
                       map(elements(h), [](double x) { return wrapped<T>(std::trunc(x)); }),
                       [&](auto& y) { y = weft::cast<T>(h); });
  };
  from_floats(std::type_identity<std::int8_t>{}, "int8");
  from_floats(std::type_identity<std::uint8_t>{}, "uint8");
  from_floats(std::type_identity<std::int16_t>{}, "int16");

  // Integers: the low bits (int32 -> int8, int16 -> uint8, int8 -> uint8 ...); bool -> 0 / 1.
  const auto i32 = random_ints<std::int32_t>(rng, shape);
  std::vector<std::int64_t> wide(std::size_t(shape.numel()));  // |x| <= 2^52: exact in the test's doubles
  for (std::int64_t& x : wide) x = rng.integer(-(std::int64_t(1) << 52), std::int64_t(1) << 52);
  const auto i64 = weft::from_vector<std::int64_t>(wide, shape);
  const auto i8 = random_ints<std::int8_t>(rng, shape);
  const auto i16 = random_ints<std::int16_t>(rng, shape);
  const std::vector<double> v32 = elements(i32), v8 = elements(i8), v16 = elements(i16);
  check_statement<std::int8_t>("cast<int8>(int32)", shape, map(v32, wrapped<std::int8_t>),
                               [&](auto& y) { y = weft::cast<std::int8_t>(i32); });
  check_statement<std::int16_t>("cast<int16>(int32)", shape, map(v32, wrapped<std::int16_t>),
                                [&](auto& y) { y = weft::cast<std::int16_t>(i32); });
  check_statement<std::uint8_t>("cast<uint8>(int16)", shape, map(v16, wrapped<std::uint8_t>),
                                [&](auto& y) { y = weft::cast<std::uint8_t>(i16); });
  check_statement<std::uint8_t>("cast<uint8>(int8)", shape, map(v8, wrapped<std::uint8_t>),
                                [&](auto& y) { y = weft::cast<std::uint8_t>(i8); });
  check_statement<std::int8_t>("cast<int8>(int64 low bits)", shape,
                               map(elements(i64), [](double x) { return wrapped<std::int8_t>(x); }),
                               [&](auto& y) { y = weft::cast<std::int8_t>(i64); });
  check_statement<std::uint8_t>("cast<uint8>(bool)", shape, map(v8, [](double x) { return double(x > 3); }),
                                [&](auto& y) { y = weft::cast<std::uint8_t>(i8 > 3); });
  // And out to every dtype: exact in each (|x| < 2^15 fits float16's 11 bits only below 2048).
  check_statement<float>("cast<float32>(int16)", shape, v16, [&](auto& y) { y = weft::cast<float>(i16); });
  check_statement<double>("cast<float64>(int8)", shape, v8, [&](auto& y) { y = weft::cast<double>(i8); });
  check_statement<weft::half>("cast<float16>(int8)", shape, v8, [&](auto& y) { y = weft::cast<weft::half>(i8); });
  check_statement<weft::bfloat16>("cast<bfloat16>(int8)", shape, v8,
                                  [&](auto& y) { y = weft::cast<weft::bfloat16>(i8); });
  check_statement<std::int32_t>("int32 destination of int16", shape, v16, [&](auto& y) { y = i16; });
  check_statement<std::int64_t>("int64 destination of int8", shape, v8, [&](auto& y) { y = i8; });
  check_statement<bool>("cast<bool>(int16)", shape, map(v16, [](double x) { return double(x != 0); }),
                        [&](auto& y) { y = weft::cast<bool>(i16); });
}

TEST_CASE("narrow ints: print as numbers, in torch's format") {
  // An int8_t is a signed char to iostreams: the elements must print as integers, not characters.
  std::ostringstream os;
  os << weft::from_vector<std::int8_t>({-128, 65, 127}) << ' ' << weft::from_vector<std::uint8_t>({0, 65, 255}) << ' '
     << weft::from_vector<std::int16_t>({-32768, 7});
  CHECK(os.str() ==
        "tensor([-128,   65,  127], dtype=int8) tensor([  0,  65, 255], dtype=uint8) tensor([-32768,      7], dtype=int16)");
}

TEST_CASE("narrow ints: sum and prod accumulate in int64, max and min keep the dtype, mean refuses") {
  WEFT_TEST_RNG(rng);
  const auto a = random_ints<std::int8_t>(rng, {37, 41});
  const auto u = random_ints<std::uint8_t>(rng, {37, 41});
  const auto h = random_ints<std::int16_t>(rng, {37, 41});
  auto total = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s;
  };
  const weft::Tensor<std::int64_t> sa = weft::sum(a), su = weft::sum(u), sh = weft::sum(h);
  CHECK(double(sa.item()) == total(elements(a)));
  CHECK(double(su.item()) == total(elements(u)));  // 1517 bytes of up to 255: beyond any 8- or 16-bit sum
  CHECK(double(sh.item()) == total(elements(h)));
  // Over an expression: the int8 products wrap first (as torch's a * a), then sum in int64.
  double wrapped_squares = 0;
  for (double x : elements(a)) wrapped_squares += wrapped<std::int8_t>(x * x);
  CHECK(double(weft::sum(a * a).item()) == wrapped_squares);
  // Over dim 1: one int64 per row.
  const weft::Tensor<std::int64_t> rows = weft::eval(weft::sum(u, 1));
  const std::vector<double> vu = elements(u), got = elements(rows);
  std::int64_t wrong = 0;
  for (std::int64_t r = 0; r < 37; ++r) {
    double s = 0;
    for (std::int64_t c = 0; c < 41; ++c) s += vu[std::size_t(r * 41 + c)];
    wrong += got[std::size_t(r)] != s;
  }
  CHECK(wrong == 0);
  // prod of a few small values in int64 (no wrap: |product| < 2^63).
  const auto few = weft::from_vector<std::int8_t>({-3, 7, 2, -5, 11, 1, -1, 9});
  CHECK(weft::prod(few).item() == std::int64_t(-3) * 7 * 2 * -5 * 11 * 1 * -1 * 9);
  const weft::Tensor<std::int8_t> mx = weft::amax(a);
  const weft::Tensor<std::uint8_t> mn = weft::amin(u);
  double want_max = -1e9, want_min = 1e9;
  for (double x : elements(a)) want_max = std::max(want_max, x);
  for (double x : vu) want_min = std::min(want_min, x);
  CHECK(double(mx.item()) == want_max);
  CHECK(double(mn.item()) == want_min);
  CHECK(has(error_of([&] { (void)weft::mean(a); }), "mean"));
  // foreach_norm squares integers in float (int16's 2^30 squares would overflow int32 lanes): the
  // sum of squares in blocks of 64 float packets, relative error <= 64 * 2^-24 before the sqrt.
  std::vector<weft::Tensor<std::int16_t>> members{h, weft::full<std::int16_t>({1000}, std::int16_t(-32768))};
  const weft::Tensor<float> norms = weft::foreach_norm(weft::TensorList<std::int16_t>(members));
  for (std::size_t k = 0; k < members.size(); ++k) {
    double squares = 0;
    for (double x : elements(members[k])) squares += x * x;
    const double want = std::sqrt(squares);
    CHECK(std::fabs(double(norms.to_vector()[k]) - want) <= 64 * 0x1p-24 * want);
  }
}

}  // TEST_SUITE

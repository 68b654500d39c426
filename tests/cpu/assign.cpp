// SPDX-License-Identifier: MIT
/// @file cpu: `y = x` between dtypes and layouts, and compound assignment (y += e, -=, *=, /=) into
/// strided destinations with broadcast right-hand sides; elements around a view stay untouched.
#include "pointwise_check.hpp"

using namespace weft_test;

namespace {

/// A destination view with known values inside and poison around it (in the same storage).
template <class T>
Tensor<T> seeded_destination(Rng& rng, const Shape& shape, const Domain& d, std::vector<double>& values) {
  Tensor<T> y = make_destination<T>(rng, shape, random_layout(rng, true));
  Tensor<T> src = random_contiguous<T>(rng, shape, d);
  values = values_of(src);
  write_values(y, values);
  return y;
}

/// Runs `y op= e` for random shapes / layouts and checks against ref(old y, rhs value).
template <class T, class R, class Apply, class Ref>
void check_compound(const char* what, Rng& rng, Domain dy, Domain dr, double ulps, Apply apply, Ref ref) {
  INFO("op: ", std::string(what));
  for (int trial = 0; trial < 10; ++trial) {
    Shape shape = random_shape(rng, 0, 4, 2000);
    std::vector<double> old;
    Tensor<T> y = seeded_destination<T>(rng, shape, dy, old);
    Tensor<R> rhs = make_view<R>(rng, trial == 0 ? shape : broadcastable_to(rng, shape), dr, random_layout(rng, false));
    INFO("y ", shape_str(shape), y.is_contiguous() ? "" : " (strided)", ", rhs ", shape_str(rhs.shape()));
    std::vector<double> r = broadcast_values(rhs, shape);
    apply(y, rhs);
    std::vector<Expect> want(old.size());
    for (std::size_t i = 0; i < old.size(); ++i) want[i] = ref(old[i], r[i]);
    (void)ulps;
    WEFT_CHECK_REPORT(check_output(y, want));
  }
}

/// Tolerance of one correctly rounded op computed in C and stored to T (see pointwise_check.hpp).
template <class T, class C>
Expect one_op(double v) {
  return expect_value<T, C>(rel(v), 1);
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("assign: y = x converts dtypes and broadcasts into any layout") {
  WEFT_TEST_RNG(rng);
  for (int trial = 0; trial < 12; ++trial) {
    Shape shape = random_shape(rng, 0, 4, 2000);
    Tensor<float> x = make_view<float>(rng, broadcastable_to(rng, shape), Domain{-300, 300}, random_layout(rng, false));
    std::vector<double> xv = broadcast_values(x, shape);
    Tensor<half> yh = make_destination<half>(rng, shape, random_layout(rng, true));
    yh = x;
    std::vector<Expect> want;
    for (double v : xv) want.push_back({round_half(v), 0});
    WEFT_CHECK_REPORT(check_output(yh, want));
    Tensor<std::int32_t> yi = make_destination<std::int32_t>(rng, shape, random_layout(rng, true));
    yi = x;
    want.clear();
    for (double v : xv) want.push_back({std::trunc(v), 0});
    WEFT_CHECK_REPORT(check_output(yi, want));
    Tensor<double> yd = make_destination<double>(rng, shape, random_layout(rng, true));
    yd = x;
    want.clear();
    for (double v : xv) want.push_back({v, 0});
    WEFT_CHECK_REPORT(check_output(yd, want));
  }
}

TEST_CASE("assign: += -= *= /= on float32 with broadcast, strided operands") {
  WEFT_TEST_RNG(rng);
  Domain d{-8, 8};
  Domain nz{0.25, 8, true, true};
  check_compound<float, float>("+=", rng, d, d, 1, [](Tensor<float>& y, const Tensor<float>& r) { y += r; },
                               [](double a, double b) { return one_op<float, float>(a + b); });
  check_compound<float, float>("-= 2 * r", rng, d, d, 1, [](Tensor<float>& y, const Tensor<float>& r) { y -= 2 * r; },
                               [](double a, double b) { return one_op<float, float>(a - 2 * b); });
  check_compound<float, float>("*= r + 1", rng, d, d, 1, [](Tensor<float>& y, const Tensor<float>& r) { y *= r + 1; },
                               [](double a, double b) {
                                 // (r + 1) rounds, then the product: 2 roundings, |err| <= u |r + 1| |y| + u |v|
                                 double v = a * (b + 1);
                                 return expect_value<float, float>(RefVal{v, std::fabs(v) + std::fabs(a * (b + 1))}, 1);
                               });
  check_compound<float, float>("/=", rng, d, nz, 1, [](Tensor<float>& y, const Tensor<float>& r) { y /= r; },
                               [](double a, double b) { return one_op<float, float>(a / b); });
}

TEST_CASE("assign: compound assignment on int32, float16 and with a different rhs dtype") {
  WEFT_TEST_RNG(rng);
  Domain di{-100, 100};
  check_compound<std::int32_t, std::int32_t>("int32 +=", rng, di, di, 0,
                                             [](Tensor<std::int32_t>& y, const Tensor<std::int32_t>& r) { y += r; },
                                             [](double a, double b) { return Expect{a + b, 0}; });
  check_compound<std::int32_t, std::int32_t>("int32 *=", rng, di, di, 0,
                                             [](Tensor<std::int32_t>& y, const Tensor<std::int32_t>& r) { y *= r; },
                                             [](double a, double b) { return Expect{a * b, 0}; });
  check_compound<std::int32_t, std::int32_t>("int32 -= 7", rng, di, di, 0,
                                             [](Tensor<std::int32_t>& y, const Tensor<std::int32_t>&) { y -= 7; },
                                             [](double a, double) { return Expect{a - 7, 0}; });
  Domain dh{-8, 8};
  check_compound<half, half>("float16 +=", rng, dh, dh, 1, [](Tensor<half>& y, const Tensor<half>& r) { y += r; },
                             [](double a, double b) { return one_op<half, float>(a + b); });
  check_compound<half, half>("float16 *= 0.5", rng, dh, dh, 1, [](Tensor<half>& y, const Tensor<half>&) { y *= 0.5; },
                             [](double a, double) { return one_op<half, float>(a * 0.5); });
  // A float16 rhs added to a float32 destination: computed in float32.
  check_compound<float, half>("float32 += float16", rng, dh, dh, 1, [](Tensor<float>& y, const Tensor<half>& r) { y += r; },
                              [](double a, double b) { return one_op<float, float>(a + b); });
  // double /= int32: true division in float64.
  check_compound<double, std::int32_t>("float64 /= int32", rng, dh, Domain{-9, 9, false, true, 0, 1}, 1,
                                       [](Tensor<double>& y, const Tensor<std::int32_t>& r) { y /= r; },
                                       [](double a, double b) { return one_op<double, double>(a / b); });
}

}  // TEST_SUITE

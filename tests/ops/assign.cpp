// SPDX-License-Identifier: MIT
/// @file cpu: `y = x` between dtypes and layouts, and compound assignment (y += e, -=, *=, /=) into
/// strided destinations with broadcast right-hand sides; elements around a view stay untouched.
#include "assign_common.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {

TEST_CASE("assign: y = x converts dtypes and broadcasts into any layout") {
  WEFT_TEST_RNG(rng);
  for (int trial = 0; trial < 12; ++trial) {
    Shape shape = random_shape(rng, 0, 4, 2000);
    TensorView<float> x = make_view<float>(rng, broadcastable_to(rng, shape), Domain{-300, 300}, random_layout(rng, false));
    std::vector<double> xv = broadcast_values(x, shape);
    TensorView<half> yh = make_destination<half>(rng, shape, random_layout(rng, true));
    yh = x;
    std::vector<Expect> want;
    for (double v : xv) want.push_back({round_half(v), 0});
    WEFT_CHECK_REPORT(check_output(yh, want));
    TensorView<std::int32_t> yi = make_destination<std::int32_t>(rng, shape, random_layout(rng, true));
    yi = weft::cast<std::int32_t>(x);
    want.clear();
    for (double v : xv) want.push_back({std::trunc(v), 0});
    WEFT_CHECK_REPORT(check_output(yi, want));
    TensorView<double> yd = make_destination<double>(rng, shape, random_layout(rng, true));
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
  check_compound<float, float>("+=", rng, d, d, [](TensorView<float>& y, const weft::TensorBase<float>& r) { y += r; },
                               [](double a, double b) { return one_op<float, float>(a + b); });
  check_compound<float, float>("-= 2 * r", rng, d, d, [](TensorView<float>& y, const weft::TensorBase<float>& r) { y -= 2 * r; },
                               [](double a, double b) { return one_op<float, float>(a - 2 * b); });
  check_compound<float, float>("*= r + 1", rng, d, d, [](TensorView<float>& y, const weft::TensorBase<float>& r) { y *= r + 1; },
                               [](double a, double b) {
                                 // (r + 1) rounds, then the product: 2 roundings, |err| <= u |r + 1| |y| + u |v|
                                 double v = a * (b + 1);
                                 return expect_value<float, float>(RefVal{v, std::fabs(v) + std::fabs(a * (b + 1))}, 1);
                               });
  check_compound<float, float>("/=", rng, d, nz, [](TensorView<float>& y, const weft::TensorBase<float>& r) { y /= r; },
                               [](double a, double b) { return one_op<float, float>(a / b); });
}

}  // TEST_SUITE

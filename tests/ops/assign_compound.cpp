// SPDX-License-Identifier: MIT
/// @file cpu: compound assignment on int32 and float16 destinations, and with a right-hand side of another dtype.
#include "assign_common.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {

TEST_CASE("assign: compound assignment on int32, float16 and with a different rhs dtype") {
  WEFT_TEST_RNG(rng);
  Domain di{-100, 100};
  check_compound<std::int32_t, std::int32_t>("int32 +=", rng, di, di,
                                             [](TensorView<std::int32_t>& y, const weft::TensorBase<std::int32_t>& r) { y += r; },
                                             [](double a, double b) { return Expect{a + b, 0}; });
  check_compound<std::int32_t, std::int32_t>("int32 *=", rng, di, di,
                                             [](TensorView<std::int32_t>& y, const weft::TensorBase<std::int32_t>& r) { y *= r; },
                                             [](double a, double b) { return Expect{a * b, 0}; });
  check_compound<std::int32_t, std::int32_t>("int32 -= 7", rng, di, di,
                                             [](TensorView<std::int32_t>& y, const weft::TensorBase<std::int32_t>&) { y -= 7; },
                                             [](double a, double) { return Expect{a - 7, 0}; });
  Domain dh{-8, 8};
  check_compound<half, half>("float16 +=", rng, dh, dh, [](TensorView<half>& y, const weft::TensorBase<half>& r) { y += r; },
                             [](double a, double b) { return one_op<half, float>(a + b); });
  check_compound<half, half>("float16 *= 0.5", rng, dh, dh, [](TensorView<half>& y, const weft::TensorBase<half>&) { y *= 0.5; },
                             [](double a, double) { return one_op<half, float>(a * 0.5); });
  // A float16 rhs added to a float32 destination: computed in float32.
  check_compound<float, half>("float32 += float16", rng, dh, dh, [](TensorView<float>& y, const weft::TensorBase<half>& r) { y += r; },
                              [](double a, double b) { return one_op<float, float>(a + b); });
  // double /= int32: true division in float64.
  check_compound<double, std::int32_t>("float64 /= int32", rng, dh, Domain{-9, 9, false, true, 0, 1},
                                       [](TensorView<double>& y, const weft::TensorBase<std::int32_t>& r) { y /= r; },
                                       [](double a, double b) { return one_op<double, double>(a / b); });
}

}  // TEST_SUITE

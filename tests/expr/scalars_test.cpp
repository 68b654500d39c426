// SPDX-License-Identifier: MIT
/// @file C++ numbers in expressions: the wrapped-number promotion rule, comparisons, eval; see scalars_common.hpp.
#include "scalars_common.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("scalars: bool tensors, and category lifting in functions") {
  WEFT_TEST_RNG(rng);
  check_op<float, std::int32_t>("maximum(int32, 0.5)", rng, {Domain{-3, 3}}, 0,
                                [](const auto& x) { return weft::maximum(x, 0.5); },
                                [](double x) { return exact(std::max(x, 0.5)); });
  check_op<std::int64_t, bool>("bool + 1", rng, {Domain{}}, 0, [](const auto& x) { return x + 1; },
                               [](double x) { return exact(x + 1); });
  check_op<float, bool>("bool * 2.5", rng, {Domain{}}, 0, [](const auto& x) { return x * 2.5; },
                        [](double x) { return exact(x * 2.5); });
  check_op<std::int32_t, std::int32_t>("pow(int32, 3)", rng, {Domain{-20, 20}}, 0,
                                       [](const auto& x) { return weft::pow(x, 3); },
                                       [](double x) { return exact(x * x * x); });
}
TEST_CASE("scalars: comparisons with numbers") {
  WEFT_TEST_RNG(rng);
  check_op<bool, std::int32_t>("int32 < 2.5", rng, {Domain{-5, 5}}, 0, [](const auto& x) { return x < 2.5; },
                               [](double x) { return exact(x < 2.5); });
  check_op<bool, float>("float == 1", rng, {Domain{-2, 2, false, true, 0, 0, 0.02, 0.5}}, 0,
                        [](const auto& x) { return x == 1; }, [](double x) { return exact(x == 1); });
  check_op<bool, weft::half>("2 >= half", rng, {Domain{-4, 4, false, true, 0, 0, 0.02, 0.5}}, 0,
                             [](const auto& x) { return 2 >= x; }, [](double x) { return exact(2 >= x); });
}
TEST_CASE("scalars: value types at compile time and the result of eval") {
  Tensor<std::int32_t> i = weft::from_vector<std::int32_t>({7, -7, 3});
  Tensor<std::int32_t> j = weft::from_vector<std::int32_t>({2, 2, -2});
  auto q = weft::eval(i / j);  // int32 / int32 is float32 (torch.div)
  static_assert(std::is_same_v<decltype(q), Tensor<float>>);
  CHECK(values_of(q) == std::vector<double>{3.5, -3.5, -1.5});
  auto h = weft::eval(weft::from_vector<half>({half(1.0f), half(3.0f)}) * 2.5);
  static_assert(std::is_same_v<decltype(h), Tensor<half>>);
  CHECK(values_of(h) == std::vector<double>{2.5, 7.5});
  auto f = weft::eval(i * 2.5);
  static_assert(std::is_same_v<decltype(f), Tensor<float>>);
  CHECK(values_of(f) == std::vector<double>{17.5, -17.5, 7.5});
  auto k = weft::eval(i * 2);
  static_assert(std::is_same_v<decltype(k), Tensor<std::int32_t>>);
  CHECK(values_of(k) == std::vector<double>{14, -14, 6});
  auto b = weft::eval(weft::from_vector<bool>({true, false}) + 1);
  static_assert(std::is_same_v<decltype(b), Tensor<std::int64_t>>);
  CHECK(values_of(b) == std::vector<double>{2, 1});
  auto c = weft::eval(i > 0);
  static_assert(std::is_same_v<decltype(c), Tensor<bool>>);
  CHECK(values_of(c) == std::vector<double>{1, 0, 1});
}
TEST_CASE("scalars: float32 and float64 tensors") {
  WEFT_TEST_RNG(rng);
  // 0.1 is not a float: the kernel subtracts float(0.1) (PyTorch converts the number the same way).
  check_op<float, float>("float - 0.1", rng, {kSmall}, 1, [](const auto& x) { return x - 0.1; },
                         [](double x) { return rel(x - as_seen<float>(0.1)); });
  check_op<double, double>("double * 0.1", rng, {kSmall}, 1, [](const auto& x) { return x * 0.1; },
                           [](double x) { return rel(x * 0.1); });
  check_op<float, float>("pow(float, 2)", rng, {kSmall}, 4, [](const auto& x) { return weft::pow(x, 2); },
                         [](double x) { return rel(x * x); });
  check_op<float, float>("pow(2.0, float)", rng, {kSmall}, 4, [](const auto& x) { return weft::pow(2.0, x); },
                         [](double x) { return rel(std::exp2(x)); });
}
TEST_CASE("scalars: 16-bit floating tensors keep their dtype") {
  WEFT_TEST_RNG(rng);
  check_op<half, half>("half * 2.5", rng, {kSmall}, 1, [](const auto& x) { return x * 2.5; },
                       [](double x) { return rel(x * 2.5); });
  check_op<bfloat16, bfloat16>("bfloat16 / 3", rng, {kSmall}, 1, [](const auto& x) { return x / 3; },
                               [](double x) { return rel(x / 3); });
  check_op<half, half>("1.5 / half", rng, {Domain{0.25, 8, true, true}}, 1, [](const auto& x) { return 1.5 / x; },
                       [](double x) { return rel(1.5 / x); });
  check_op<half, half>("half + true", rng, {kSmall}, 1, [](const auto& x) { return x + true; },
                       [](double x) { return rel(x + 1); });
}
TEST_CASE("scalars: integer tensors") {
  WEFT_TEST_RNG(rng);
  check_op<float, std::int32_t>("int32 * 2.5", rng, {kInts}, 1, [](const auto& x) { return x * 2.5; },
                                [](double x) { return rel(x * 2.5); });
  check_op<std::int32_t, std::int32_t>("int32 + 3", rng, {kInts}, 0, [](const auto& x) { return x + 3; },
                                       [](double x) { return exact(x + 3); });
  check_op<std::int64_t, std::int64_t>("2 - int64", rng, {kInts}, 0, [](const auto& x) { return 2 - x; },
                                       [](double x) { return exact(2 - x); });
  check_op<float, std::int32_t>("int32 / 2 (true division)", rng, {kInts}, 1, [](const auto& x) { return x / 2; },
                                [](double x) { return rel(x / 2); });
}
}

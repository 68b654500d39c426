// SPDX-License-Identifier: MIT
/// @file cpu: the dtype eval() returns for mixed expressions, with their values.
#include "scalars_common.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
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
}

// SPDX-License-Identifier: MIT
/// @file cpu: reductions of int32, int64 and bool tensors: exact, and sums accumulate in int64.
#include <weft/dense/reduce.hpp>

#include "reduce_sweep.hpp"

using namespace weft_test;


TEST_SUITE("cpu") {

TEST_CASE_TEMPLATE("reduce: integer and bool dtypes are exact; sums are int64", T, std::int32_t, std::int64_t, bool) {
  WEFT_TEST_RNG(rng);
  random_sweep<T>(rng, 40);
  static_assert(std::is_same_v<decltype(weft::sum(std::declval<Tensor<T>>())), Tensor<std::int64_t>>);
  // Sums beyond the int32 range do not wrap: they accumulate in int64.
  if constexpr (std::is_same_v<T, std::int32_t>) {
    const Tensor<std::int32_t> big = weft::full<std::int32_t>(Shape{3, 1000}, 2000000000);
    for (double x : values_of(weft::sum(big, 1))) CHECK(x == 2e12);
    CHECK(double(weft::sum(big).item()) == 6e12);
  }
  if constexpr (std::is_same_v<T, bool>) {
    const Tensor<bool> t = weft::from_vector<bool>({true, false, true, true, false, false}, Shape{2, 3});
    CHECK(values_of(weft::sum(t, 1)) == std::vector<double>{2, 1});
    CHECK(values_of(weft::amax(t, 0)) == std::vector<double>{1, 0, 1});  // any
    CHECK(values_of(weft::min(t, 0)) == std::vector<double>{1, 0, 0});   // all
  }
}

}  // TEST_SUITE

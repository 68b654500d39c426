// SPDX-License-Identifier: MIT
/// @file reductions of float64, 16-bit float and integer tensors against double references; see reduce_sweep.hpp.
#include <weft/ops/reduce.hpp>
#include "reduce_sweep.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
// Reductions of float64 tensors (accumulated in double, against references summed with compensation: a plain double loop
// would be as inexact as the code under test) and of float16 and bfloat16 tensors (accumulated in float, rounded once to
// the dtype), against double-precision references; the tolerance is the accumulator's.
TEST_CASE_TEMPLATE("reduce: float64 and 16-bit floats against double references", T, double, half, bfloat16) {
  WEFT_TEST_RNG(rng);
  random_sweep<T>(rng, 40);
  // Columns and long rows, where the packet paths and the cascade do the work.
  for (const Shape& s : {Shape{4099}, Shape{300, 70}, Shape{70, 300}}) {
    const TensorView<T> x = make_view<T>(rng, s, Domain{}, Layout::contiguous);
    const std::vector<double> v = values_of(x);
    for (std::int64_t d = 0; d < s.rank(); ++d) {
      const std::vector<bool> mask = reduce_mask(s.rank(), {d});
      check_reduction(weft::sum(x, d), Op::sum, v, s, mask, false, 0, accumulator_eps<T>());
      check_reduction(weft::amax(x, d), Op::amax, v, s, mask, false, 0, accumulator_eps<T>());
    }
  }
}

TEST_CASE("reduce: 16-bit sums accumulate in float") {
  // 4096 ones in half: a half accumulator would stop at 2048 (2048 + 1 rounds to 2048).
  const Tensor<half> ones = weft::ones<half>(Shape{4096});
  CHECK(float(weft::sum(ones).item()) == 4096.0f);
  CHECK(float(weft::mean(ones).item()) == 1.0f);
  const Tensor<bfloat16> b = weft::ones<bfloat16>(Shape{64, 512});
  const std::vector<double> s = values_of(weft::sum(b, 1));
  for (double x : s) CHECK(x == 512.0);  // bfloat16 would stop at 256
}
// Reductions of int32, int64 and bool tensors: exact, and sums accumulate in int64.
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
}

// SPDX-License-Identifier: MIT
/// @file cpu: reductions of float16 and bfloat16 tensors (accumulated in float, rounded once to the
/// dtype) against double-precision references.
#include <weft/dense/reduce.hpp>

#include "reduce_sweep.hpp"

using namespace weft_test;


TEST_SUITE("cpu") {

TEST_CASE_TEMPLATE("reduce: 16-bit floats (accumulated in float, rounded once)", T, half, bfloat16) {
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

}  // TEST_SUITE

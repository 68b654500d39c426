// SPDX-License-Identifier: MIT
/// @file cpu: reductions of float64 tensors against references summed with compensation (a plain
/// double loop would be as inexact as the code under test). 16-bit floats: reduce_half_test.cpp.
#include <weft/dense/reduce.hpp>

#include "reduce_sweep.hpp"

using namespace weft_test;


TEST_SUITE("cpu") {

TEST_CASE("reduce: float64 (accumulated in double)") {
  using T = double;
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

}  // TEST_SUITE

// SPDX-License-Identifier: MIT
/// @file Test helper for reductions: a random sweep of shapes, layouts, dims and keepdim for one
/// dtype, checked against compensated double-precision references.
#pragma once

#include <weft/ops/reduce.hpp>

#include "dense_reference.hpp"
#include "reference.hpp"

namespace weft_test {

/// Machine epsilon of the type a T reduction accumulates in (float for 16-bit floats, exact for integers).
template <class T>
constexpr double accumulator_eps() {
  if constexpr (std::is_same_v<T, double>) return eps_of<double>();
  else if constexpr (is_float_type_v<T>) return eps_of<float>();
  else return 0.0;
}

/// Random shapes, layouts, dims and keepdim for one dtype and the ops that apply to it.
template <class T>
void random_sweep(Rng& rng, int iterations) {
  for (int iter = 0; iter < iterations; ++iter) {
    const Shape full = random_shape(rng, 0, 4, 3000);
    const Layout layout = random_layout(rng, false);
    Domain dom;
    if constexpr (std::is_integral_v<T>) dom = Domain{-1000, 1000};
    dom.zero_chance = 0.05;  // zeros decide any and all: some groups have one, some none
    const TensorView<T> x = make_view<T>(rng, full, dom, layout);
    const std::vector<double> values = values_of(x);
    const std::vector<std::int64_t> dims = random_dims(rng, full.rank());
    const bool keepdim = rng.chance(0.5);
    const std::vector<bool> mask = reduce_mask(full.rank(), dims);
    std::int64_t n_red = 1;
    for (int d = 0; d < full.rank(); ++d)
      if (mask[std::size_t(d)]) n_red *= full[d];
    INFO("dtype ", type_name<T>(), ", iteration ", iter, ", layout ", layout_name(layout));
    constexpr double eps = accumulator_eps<T>();
    check_reduction(weft::sum(x, dims, keepdim), Op::sum, values, full, mask, keepdim, 0, eps);
    check_reduction(weft::any(x, dims, keepdim), Op::any, values, full, mask, keepdim, 0, 0);
    check_reduction(weft::all(x, dims, keepdim), Op::all, values, full, mask, keepdim, 0, 0);
    if (n_red > 0) {
      check_reduction(weft::amax(x, dims, keepdim), Op::amax, values, full, mask, keepdim, 0, eps);
      check_reduction(weft::min(x, dims, keepdim), Op::min, values, full, mask, keepdim, 0, eps);
    }
    // prod on its own input: magnitudes around 1 (log-uniform in [0.8, 1.25], so that long
    // products neither overflow nor vanish in float: log2 of a product of 3000 has a standard
    // deviation of 10), or integers of magnitude 1 to 3 (long products wrap).
    Domain near_one{0.8, 1.25, true};
    if constexpr (std::is_integral_v<T>) near_one = Domain{-3, 3}, near_one.avoid = 1;
    const TensorView<T> xp = make_view<T>(rng, full, near_one, layout);
    check_reduction(weft::prod(xp, dims, keepdim), Op::prod, values_of(xp), full, mask, keepdim, 0, eps);
    if constexpr (is_float_type_v<T>) {
      check_reduction(weft::mean(x, dims, keepdim), Op::mean, values, full, mask, keepdim, 0, eps);
      const double p = rng.pick(std::vector<double>{1, 2, 3, 0, INFINITY});
      if (n_red > 0 || p != INFINITY)
        check_reduction(weft::norm(x, p, dims, keepdim), Op::norm, values, full, mask, keepdim, p, eps);
    }
  }
}

}  // namespace weft_test

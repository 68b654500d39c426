// SPDX-License-Identifier: MIT
/// @file cpu: reductions whose input is an expression (evaluated inside the reduction loop, never
/// materialized): broadcasting operands, shared subexpressions, math functions, comparisons.
#include <weft/ops/reduce.hpp>

#include "dense_reference.hpp"
#include "reference.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {

TEST_CASE("reduce: expression inputs are evaluated inside the reduction") {
  constexpr double kFloatEps = eps_of<float>();
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 20; ++iter) {
    const Shape full = random_shape(rng, 1, 4, 4000);
    const Shape bs = broadcastable_to(rng, full);
    const TensorView<float> a = make_view<float>(rng, full, Domain{}, random_layout(rng, false));
    const TensorView<float> b = make_view<float>(rng, bs, Domain{0.5, 2}, random_layout(rng, false));
    const std::vector<double> av = values_of(a);
    std::vector<double> prod, expd, expd_mag, absdiff, sq, sq_mag;
    for_each_index(full, [&](const std::vector<std::int64_t>& idx) {
      const double x = value_at(a, idx), y = value_at(b, idx);
      prod.push_back(x * y);
      expd.push_back(std::exp(x) - y);
      expd_mag.push_back(std::exp(x) + std::fabs(y));
      absdiff.push_back(std::fabs(round_float(x - y)));  // a - b rounds to float first
      const double t = x * y;
      sq.push_back(t * t + t);
      sq_mag.push_back(t * t + std::fabs(t));
    });
    const std::vector<std::int64_t> dims = random_dims(rng, full.rank());
    const std::vector<bool> mask = reduce_mask(full.rank(), dims);
    const bool keepdim = rng.chance(0.5);
    INFO("a ", shape_str(full), " b ", shape_str(bs));
    check_reduction(weft::sum(a * b, dims, keepdim), Op::sum, prod, full, mask, keepdim, 0, kFloatEps);
    // Each element rounds a few times (exp within a few ulps) relative to its terms' magnitudes.
    check_reduction(weft::mean(weft::exp(a) - b, dims, keepdim), Op::mean, expd, full, mask, keepdim, 0,
                    kFloatEps, expd_mag);
    const auto t = a * b;  // a shared subexpression: computed once per element
    check_reduction(weft::sum(t * t + t, dims, keepdim), Op::sum, sq, full, mask, keepdim, 0, kFloatEps, sq_mag);
    std::int64_t n_red = 1;
    for (int d = 0; d < full.rank(); ++d)
      if (mask[std::size_t(d)]) n_red *= full[d];
    if (n_red > 0)
      check_reduction(weft::amax(weft::abs(a - b), dims, keepdim), Op::amax, absdiff, full, mask, keepdim, 0,
                      kFloatEps);
    check_reduction(weft::norm(a - b, 2, dims, keepdim), Op::norm, absdiff, full, mask, keepdim, 2, kFloatEps);

    // A comparison sums to an int64 count.
    const Tensor<std::int64_t> count = weft::sum(a > 0.0, dims, keepdim);
    ReductionReference ref(av, full, mask);
    REQUIRE(count.shape() == reduced_shape(full, mask, keepdim));
    const std::vector<double> got = values_of(count);
    for (std::size_t o = 0; o < got.size(); ++o) {
      double want = 0;
      for (double x : ref.groups[o]) want += x > 0;
      CHECK(got[o] == want);
    }
  }
}

}  // TEST_SUITE

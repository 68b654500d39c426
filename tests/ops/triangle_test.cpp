// SPDX-License-Identifier: MIT
/// @file cpu: tril, triu and outer as expressions, against index loops in the test (random batched shapes, diagonals k of every sign and beyond the matrix, non-contiguous inputs, every dtype), written into poisoned strided destinations, fused with the expression around them, and their errors.
#include <weft/ops/outer.hpp>
#include <weft/ops/triangle.hpp>

#include "error_check.hpp"
#include "reference.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {

TEST_CASE_TEMPLATE("tril and triu: random batches, diagonals and layouts", T, float, double, half, bfloat16,
                   std::int32_t, std::int64_t, bool) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 30; ++iter) {
    const Shape shape = random_shape(rng, 2, 4, 600);
    const TensorView<T> x = make_view<T>(rng, shape, Domain{}, random_layout(rng, false));
    const std::int64_t m = shape[shape.rank() - 2], n = shape[shape.rank() - 1];
    const std::int64_t k = rng.integer(-m - 2, n + 2);
    INFO("dtype ", type_name<T>(), ", shape ", shape_str(shape), ", k ", k);
    for (const bool lower : {true, false}) {
      INFO((lower ? "tril" : "triu"));
      TensorView<T> dst = make_destination<T>(rng, shape, random_layout(rng, true));
      if (lower) dst = weft::tril(x, k);
      else dst = weft::triu(x, k);
      WEFT_CHECK_REPORT(check_output(dst, [&](const std::vector<std::int64_t>& idx) {
        const std::int64_t j_minus_i = idx[idx.size() - 1] - idx[idx.size() - 2];
        return Expect{(lower ? j_minus_i <= k : j_minus_i >= k) ? value_at(x, idx) : 0.0};
      }));
    }
  }
}

TEST_CASE_TEMPLATE("outer: random lengths, layouts and dtypes", T, float, double, half, bfloat16, std::int32_t,
                   std::int64_t, bool) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 20; ++iter) {
    const Shape sa{rng.integer(0, 40)}, sb{rng.integer(0, 40)};
    const TensorView<T> a = make_view<T>(rng, sa, Domain{}, random_layout(rng, false));
    const TensorView<T> b = make_view<T>(rng, sb, Domain{}, random_layout(rng, false));
    INFO("dtype ", type_name<T>(), ", lengths ", sa[0], " and ", sb[0]);
    TensorView<T> dst = make_destination<T>(rng, Shape{sa[0], sb[0]}, random_layout(rng, true));
    dst = weft::outer(a, b);
    // The product of two values of T, rounded once to T (16-bit floats multiply in float): exact
    // for the others; bool's product is a logical and.
    WEFT_CHECK_REPORT(check_output(dst, [&](const std::vector<std::int64_t>& idx) {
      return Expect{round_to<T>(value_at(a, {idx[0]}) * value_at(b, {idx[1]}))};
    }));
  }
}

TEST_CASE("tril, triu, outer: expression inputs, fused into the expression around them, promotion") {
  WEFT_TEST_RNG(rng);
  const Tensor<float> x = random_contiguous<float>(rng, Shape{2, 5, 7}, Domain{});
  const Tensor<double> y = random_contiguous<double>(rng, Shape{7}, Domain{});
  // y broadcasts over the rows; the tril of an expression and a sum around it: one kernel.
  const Tensor<double> fused = weft::tril(x * 2.0f + y, 1) - 1.0;
  CHECK(fused.shape() == Shape{2, 5, 7});
  WEFT_CHECK_REPORT(check_output(fused, [&](const std::vector<std::int64_t>& idx) {
    const double v = idx[2] - idx[1] <= 1 ? double(float(value_at(x, idx) * 2)) + value_at(y, {idx[2]}) : 0.0;
    return Expect{v - 1.0, 4 * std::ldexp(1.0, -52) * (std::fabs(v) + 1)};
  }));
  const Tensor<std::int32_t> i = weft::arange<std::int32_t>(4);
  const Tensor<double> o = weft::outer(i, y) + 0.5;  // int32 x double promotes to double
  // product + 0.5 may be contracted into one fused multiply-add (clang does so by default), which
  // skips the product's rounding: allow half an ulp of the product and an ulp of the sum.
  WEFT_CHECK_REPORT(check_output(o, [&](const std::vector<std::int64_t>& idx) {
    const double product = double(idx[0]) * value_at(y, {idx[1]});
    return Expect{product + 0.5, std::ldexp(1.0, -51) * (std::fabs(product) + 1)};
  }));
}

TEST_CASE("tril, triu, outer: errors name the op, the shapes and the fix") {
  const Tensor<float> v = weft::ones<float>(Shape{4}), m = weft::ones<float>(Shape{2, 2});
  std::string msg = error_of([&] { auto e = weft::tril(v); (void)e; });
  CHECK(has(msg, "tril: needs an input of at least 2 dims (a matrix or a batch of them), got shape [4]"));
  msg = error_of([&] { auto e = weft::triu(v * 2.0f, 1); (void)e; });
  CHECK(has(msg, "triu: needs an input of at least 2 dims"));
  msg = error_of([&] { auto e = weft::outer(v, m); (void)e; });
  CHECK(has(msg, "outer: needs two 1-D tensors, got shapes [4] and [2, 2]"));
}

}  // TEST_SUITE

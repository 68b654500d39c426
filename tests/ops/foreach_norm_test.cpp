// SPDX-License-Identifier: MIT
/// @file List reductions: foreach_norm, global_norm and clip_grad_norm against double-precision loops.
#include "list_reference.hpp"

#include <weft/ops/foreach_norm.hpp>

#include <string>
#include <vector>

using namespace weft_test;

TEST_SUITE("cpu") {
// Norms: each tensor's sum of |x|^p is accumulated in blocks of 64 packets in the math type, then in
// double, so the relative error is about 64 eps(float) + the final pow; 1e-4 relative for float
// inputs is ~8x that bound. Reference: plain double loops.
TEST_CASE_TEMPLATE("foreach_norm, global_norm and clip_grad_norm match double references", T, float, double,
                   weft::half) {
  WEFT_TEST_RNG(rng);
  for (std::size_t length : kLengths) {
    CAPTURE(length);
    std::vector<Shape> shapes;
    for (std::size_t k = 0; k < length; ++k) shapes.push_back(member_shape(rng, length));
    TensorList<T> g = random_list<T>(rng, shapes, -3, 3);
    auto gv = values_of_list(g);
    for (double p : {1.0, 2.0, 3.0, double(INFINITY)}) {
      CAPTURE(p);
      std::vector<double> want;
      double all = 0;
      for (const auto& t : gv) {
        double acc = 0;
        for (double x : t) acc = std::isinf(p) ? std::max(acc, std::fabs(x)) : acc + std::pow(std::fabs(x), p);
        all = std::isinf(p) ? std::max(all, acc) : all + acc;
        want.push_back(std::isinf(p) ? acc : std::pow(acc, 1 / p));
      }
      double want_all = std::isinf(p) ? all : std::pow(all, 1 / p);
      std::vector<double> got = values_of(weft::foreach_norm(g, p));
      REQUIRE(got.size() == want.size());
      for (std::size_t k = 0; k < got.size(); ++k) CHECK(got[k] == doctest::Approx(want[k]).epsilon(1e-4));
      CHECK(values_of(weft::global_norm(g, p))[0] == doctest::Approx(want_all).epsilon(1e-4));
    }
    // clip: the global 2-norm becomes max_norm (when it was larger), every element scaled alike.
    double norm2 = values_of(weft::global_norm(g))[0];
    double max_norm = 0.5 * norm2 + 1e-3;
    double returned = values_of(weft::clip_grad_norm(g, max_norm))[0];
    CHECK(returned == doctest::Approx(norm2).epsilon(1e-4));
    double coef = std::min(1.0, max_norm / (norm2 + 1e-6));
    for (auto& t : gv)
      for (auto& x : t) x *= coef;
    check_list(g, gv, 2, 0.0);
  }
  TensorList<T> one({random_tensor<T>(rng, Shape{4}, -1, 1)});
  CHECK_THROWS_WITH_AS(weft::foreach_norm(one, -1.0), doctest::Contains("positive"), weft::Error);
  CHECK_THROWS_WITH_AS(weft::clip_grad_norm(one, -1.0), doctest::Contains("max_norm"), weft::Error);
}

}  // TEST_SUITE

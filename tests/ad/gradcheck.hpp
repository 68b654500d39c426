// SPDX-License-Identifier: MIT
/// @file gradcheck for the autograd tests: the gradient ad::grad returns against central finite differences in double, on fresh random inputs.
#pragma once

#include <cmath>
#include <functional>
#include <vector>

#include <doctest/doctest.h>
#include <weft/autograd.hpp>

#include "reference.hpp"

namespace weft_test {

using VarD = weft::ad::Var<double>;
using Vars = std::vector<VarD>;

/// A tensor of uniform values in [lo, hi) (host).
inline Tensor<double> uniform_tensor(Rng& rng, const Shape& shape, double lo, double hi) {
  Tensor<double> t = weft::empty<double>(shape);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data()[i] = rng.uniform(lo, hi);
  return t;
}

/// Checks d<r, f(x)> / dx for every input x (r: fresh random weights of f's shape, so that each
/// output element counts) against central differences: (g(x + h) - g(x - h)) / 2h with h = 1e-6.
/// In double the difference quotient is off by about h^2 |g'''| + 1e-16 |g| / h, under 1e-9 for
/// these inputs of magnitude ~1; a wrong derivative is off by the derivative's own size. The
/// tolerance 1e-6 (1 + |numeric|) sits between the two.
inline void gradcheck(Rng& rng, const std::function<VarD(const Vars&)>& f, const std::vector<Tensor<double>>& inputs,
                      double tolerance = 1e-6) {
  auto params = [&](const std::vector<Tensor<double>>& xs) {
    Vars vars;
    for (const Tensor<double>& x : xs) vars.push_back(weft::ad::param(Tensor<double>(x)));
    return vars;
  };
  const Vars vars = params(inputs);
  const VarD y = f(vars);
  const Tensor<double> r = uniform_tensor(rng, y.shape(), -1.0, 1.0);
  const std::vector<Tensor<double>> analytic = weft::ad::grad(y, vars, r);
  REQUIRE(analytic.size() == inputs.size());
  auto weighted = [&](const std::vector<Tensor<double>>& xs) {
    weft::ad::NoGrad no_grad;
    const VarD v = f(params(xs));
    REQUIRE(v.shape() == r.shape());
    double s = 0;
    const Tensor<double> value = weft::eval(v.value());
    for (std::int64_t i = 0; i < r.numel(); ++i) s += value.data()[i] * r.data()[i];
    return s;
  };
  constexpr double h = 1e-6;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    REQUIRE(analytic[k].shape() == inputs[k].shape());
    const Tensor<double> a = weft::eval(analytic[k]);
    for (std::int64_t i = 0; i < inputs[k].numel(); ++i) {
      std::vector<Tensor<double>> plus, minus;
      for (const Tensor<double>& x : inputs) {
        plus.push_back(Tensor<double>(x));
        minus.push_back(Tensor<double>(x));
      }
      plus[k].data()[i] += h;
      minus[k].data()[i] -= h;
      const double numeric = (weighted(plus) - weighted(minus)) / (2 * h);
      INFO("input ", k, " element ", i, " of shape ", weft_test::shape_str(inputs[k].shape()));
      CHECK(std::abs(a.data()[i] - numeric) <= tolerance * (1 + std::abs(numeric)));
    }
  }
}

}  // namespace weft_test

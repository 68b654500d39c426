// SPDX-License-Identifier: MIT
/// @file Autograd of pointwise expressions: every differentiable op against finite differences, with broadcast operands, constants (tensors and numbers) and a Var read several times (random trees of them: grad_trees_test.cpp).
#include <cstdint>

#include "gradcheck.hpp"

namespace {

using weft::Shape;
using weft::Tensor;
using weft_test::gradcheck;
using weft_test::uniform_tensor;
using weft_test::VarD;
using weft_test::Vars;

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("autograd: every differentiable unary op against finite differences") {
  WEFT_TEST_RNG(rng);
  const Shape s{2, 5};
  // Inputs away from each op's kinks and edges: the finite differences hold there.
  auto pos = [&] { return uniform_tensor(rng, s, 0.2, 2.0); };
  auto any = [&] { return uniform_tensor(rng, s, -2.0, 2.0); };
  auto frac = [&] {  // off integers (and off .5): floor, ceil, round, trunc, sign are flat
    Tensor<double> t = uniform_tensor(rng, s, 0.1, 0.4);
    for (std::int64_t i = 0; i < t.numel(); ++i) t.data()[i] += double(rng.integer(-3, 3));
    return t;
  };
  auto away_from_zero = [&] {
    Tensor<double> t = uniform_tensor(rng, s, 0.2, 2.0);
    for (std::int64_t i = 0; i < t.numel(); ++i)
      if (rng.chance(0.5)) t.data()[i] = -t.data()[i];
    return t;
  };
  gradcheck(rng, [](const Vars& v) -> VarD { return -v[0]; }, {any()});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::exp(v[0]); }, {any()});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::log(v[0]); }, {pos()});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::log1p(v[0]); }, {pos()});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::expm1(v[0]); }, {any()});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::sqrt(v[0]); }, {pos()});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::rsqrt(v[0]); }, {pos()});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::abs(v[0]); }, {away_from_zero()});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::sin(v[0]); }, {any()});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::cos(v[0]); }, {any()});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::tanh(v[0]); }, {any()});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::sigmoid(v[0]); }, {any()});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::relu(v[0]); }, {away_from_zero()});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::gelu(v[0]); }, {any()});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::gelu_tanh(v[0]); }, {any()});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::silu(v[0]); }, {any()});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::erf(v[0]); }, {any()});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::square(v[0]); }, {any()});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::reciprocal(v[0]); }, {pos()});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::sign(v[0]); }, {away_from_zero()});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::floor(v[0]); }, {frac()});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::ceil(v[0]); }, {frac()});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::trunc(v[0]); }, {frac()});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::round(v[0]); }, {frac()});
}

TEST_CASE("autograd: binary and ternary ops, with broadcast Vars and constants") {
  WEFT_TEST_RNG(rng);
  const Shape full{3, 4}, row{4}, col{3, 1};
  // Each binary op with both operands full, one broadcast along rows, and a number.
  for (const Shape& sb : {full, row, col}) {
    INFO("b's shape ", weft_test::shape_str(sb));
    auto any = [&](const Shape& s) { return uniform_tensor(rng, s, -2.0, 2.0); };
    auto pos = [&](const Shape& s) { return uniform_tensor(rng, s, 0.5, 2.0); };
    gradcheck(rng, [](const Vars& v) -> VarD { return v[0] + v[1]; }, {any(full), any(sb)});
    gradcheck(rng, [](const Vars& v) -> VarD { return v[1] - v[0]; }, {any(full), any(sb)});
    gradcheck(rng, [](const Vars& v) -> VarD { return v[0] * v[1]; }, {any(full), any(sb)});
    gradcheck(rng, [](const Vars& v) -> VarD { return v[0] / v[1]; }, {any(full), pos(sb)});
    gradcheck(rng, [](const Vars& v) -> VarD { return weft::pow(v[0], v[1]); }, {pos(full), any(sb)});
    gradcheck(rng, [](const Vars& v) -> VarD { return weft::maximum(v[0], v[1]) * 1.0; }, {any(full), any(sb)});
    gradcheck(rng, [](const Vars& v) -> VarD { return weft::minimum(v[1], v[0]); }, {any(full), any(sb)});
    gradcheck(rng, [](const Vars& v) -> VarD { return weft::lerp(v[0], v[1] + 0.0 * v[0], v[1]); },
              {any(full), any(sb)});
    // clamp with Var bounds: inputs drawn so that each element is inside, below or above.
    gradcheck(rng, [](const Vars& v) -> VarD { return weft::clamp(v[0], v[1] - 1.0, v[1] + 1.0); },
              {any(full), uniform_tensor(rng, sb, -0.5, 0.5)});
  }
  // fmod and remainder: b's derivative -trunc(a / b) (or -floor) holds off the jumps.
  Tensor<double> a = uniform_tensor(rng, full, 0.1, 0.9), b = uniform_tensor(rng, full, 1.1, 1.9);
  for (std::int64_t i = 0; i < a.numel(); ++i) a.data()[i] += double(rng.integer(-3, 3)) * b.data()[i];
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::fmod(v[0], v[1]); }, {a, b});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::remainder(v[0], v[1]); }, {a, b});
  // where: a bool mask (a constant) picks the branch each gradient flows to.
  const Tensor<double> m = uniform_tensor(rng, full, -1, 1);
  gradcheck(rng, [&](const Vars& v) -> VarD { return weft::where(m > 0.0, v[0], v[1] * 2.0); },
            {uniform_tensor(rng, full, -1, 1), uniform_tensor(rng, row, -1, 1)});
  // Numbers on either side, a constant tensor, a Var read three times.
  const Tensor<double> k = uniform_tensor(rng, full, -1, 1);
  gradcheck(rng, [&](const Vars& v) -> VarD { return 2.0 - v[0] * k / 3.0 + v[0] * v[0] * v[0]; },
            {uniform_tensor(rng, full, -1, 1)});
}

TEST_CASE("autograd: cast inside an expression; float gradients within float rounding") {
  WEFT_TEST_RNG(rng);
  Tensor<double> x0 = uniform_tensor(rng, {4, 3}, -1, 1);
  const auto x = weft::ad::param(weft::eval(weft::cast<float>(x0)));
  const auto y = weft::ad::param(weft::eval(weft::cast<float>(uniform_tensor(rng, {3}, -1, 1))));
  weft::ad::Var<float> z = weft::tanh(x) * weft::cast<float>(weft::cast<double>(y) * 2.0);
  weft::sum(z).backward();
  // Reference in double: d/dx = (1 - tanh^2) 2y, d/dy = sum over rows of tanh(x) 2.
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t j = 0; j < 3; ++j) {
      const double xv = double(x.value().data()[i * 3 + j]), yv = double(y.value().data()[j]);
      const double t = std::tanh(xv);
      CHECK(double(x.grad().data()[i * 3 + j]) == doctest::Approx((1 - t * t) * 2 * yv).epsilon(1e-5));
    }
  for (std::int64_t j = 0; j < 3; ++j) {
    double s = 0;
    for (std::int64_t i = 0; i < 4; ++i) s += 2 * std::tanh(double(x.value().data()[i * 3 + j]));
    CHECK(double(y.grad().data()[j]) == doctest::Approx(s).epsilon(1e-5));
  }
}

}  // TEST_SUITE

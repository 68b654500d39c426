// SPDX-License-Identifier: MIT
/// @file Autograd of pointwise expressions: every differentiable op against finite differences, with broadcast operands, constants (tensors and numbers), a Var read twice, and random expression trees built at compile time.
#include <cstdint>

#include "gradcheck.hpp"

namespace {

using weft::Shape;
using weft::Tensor;
using weft_test::gradcheck;
using weft_test::Rng;
using weft_test::uniform_tensor;
using weft_test::VarD;
using weft_test::Vars;

// ---- random trees: the op at each node and the leaves chosen from a compile-time seed ----------

constexpr std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// The operands a random tree reads: Vars a [3, 4], b [4] (broadcast along rows), c [3, 1]
/// (broadcast along columns), t = transpose of a Var d [4, 3] (a view), and a constant tensor k.
struct Leaves {
  const Vars& v;
  VarD t;
  const Tensor<double>& k;
};

/// Ops defined and smooth on every real input of moderate size (their finite differences hold).
template <std::uint64_t S, int D>
auto tree(const Leaves& l) {
  constexpr std::uint64_t h = mix(S);
  if constexpr (D == 0) {
    constexpr int pick = int(h % 6);
    if constexpr (pick == 0) return l.v[0];
    else if constexpr (pick == 1) return l.v[1];
    else if constexpr (pick == 2) return l.v[2];
    else if constexpr (pick == 3) return l.t;
    else if constexpr (pick == 4) return l.v[0] * l.k;  // a constant tensor operand
    else return l.v[1] * 0.75 + 0.5;                    // numbers
  } else {
    const auto x = tree<mix(h ^ 1), D - 1>(l);
    const auto y = tree<mix(h ^ 2), (D > 1 && h % 2) ? D - 2 : D - 1>(l);
    constexpr int op = int((h >> 8) % 16);
    if constexpr (op == 0) return x + y;
    else if constexpr (op == 1) return x - y;
    else if constexpr (op == 2) return x * y;
    else if constexpr (op == 3) return x / (1.5 + weft::square(y));
    else if constexpr (op == 4) return weft::sigmoid(x) * y;
    else if constexpr (op == 5) return weft::tanh(x) + y;
    else if constexpr (op == 6) return weft::sin(x) * weft::cos(y);
    else if constexpr (op == 7) return weft::exp(0.5 * x) - y;
    else if constexpr (op == 8) return weft::silu(x) + weft::gelu(y);
    else if constexpr (op == 9) return weft::gelu_tanh(x) * weft::erf(y);
    else if constexpr (op == 10) return weft::where(y > 0.1, x, weft::square(y));
    else if constexpr (op == 11) return weft::log1p(weft::square(x)) + y;
    else if constexpr (op == 12) return weft::sqrt(1.0 + weft::square(x)) * y;
    else if constexpr (op == 13) return weft::lerp(x, y, 0.3);
    else if constexpr (op == 14) return weft::maximum(x, y) + weft::minimum(x, 2.0 * y);
    else return -x * weft::exp(-weft::square(y));
  }
}

template <std::uint64_t S>
void check_tree(Rng& rng) {
  const Tensor<double> k = uniform_tensor(rng, {3, 4}, -1, 1);
  gradcheck(
      rng,
      [&](const Vars& v) -> VarD {
        const Leaves l{v, weft::ad::transpose(v[3], 0, 1), k};
        VarD y = tree<S, 3>(l) + 0.0 * v[0];  // every tree has a's [3, 4] shape
        return y;
      },
      {uniform_tensor(rng, {3, 4}, -1, 1), uniform_tensor(rng, {4}, -1, 1), uniform_tensor(rng, {3, 1}, -1, 1),
       uniform_tensor(rng, {4, 3}, -1, 1)});
}

template <std::uint64_t... S>
void check_trees(Rng& rng, std::integer_sequence<std::uint64_t, S...>) {
  (check_tree<S * 7919 + 13>(rng), ...);
}

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

TEST_CASE("autograd: random expression trees over broadcast Vars, a view and constants") {
  WEFT_TEST_RNG(rng);
  check_trees(rng, std::make_integer_sequence<std::uint64_t, 12>{});
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

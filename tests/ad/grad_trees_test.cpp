// SPDX-License-Identifier: MIT
/// @file Autograd of random pointwise expression trees built at compile time, against finite
/// differences: compositions of the ops pointwise_grad_test.cpp checks one by one. Each tree's
/// backward is derived and fused at compile time, which makes a tree several seconds of compile
/// time, so this file builds with the other random trees at -O0 (tests/meson.build), and the
/// number of trees is WEFT_GRAD_TREES (1; tests/meson.build says why none run under the sanitizers).
#include <cstdint>
#include <utility>

#include "gradcheck.hpp"

#ifndef WEFT_GRAD_TREES
#define WEFT_GRAD_TREES 1
#endif

namespace {

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

TEST_CASE("autograd: random expression trees over broadcast Vars, a view and constants") {
  WEFT_TEST_RNG(rng);
  check_trees(rng, std::make_integer_sequence<std::uint64_t, WEFT_GRAD_TREES>{});
}

}  // TEST_SUITE

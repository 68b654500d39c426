// SPDX-License-Identifier: MIT
/// @file cpu: + (or) * (and) maximum minimum on bool tensors, also as operands of float ops (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("binary arithmetic on bool") { run_binary_arith<bool, bool, bool, float>("bool"); }

// A bool sum read by a float op is true (1), never 2: the packets hold bools as int32 lanes.
// (Found by the random expression trees: erf(x0 + x0) for a bool x0.)
TEST_CASE("bool arithmetic inside a float expression is 0 or 1") {
  Rng rng = named_rng("bool in float", 1);
  check_op<float, bool, bool>("(a + b) * 1.5", rng, {Domain{}, Domain{}}, 0, [](const auto& a, const auto& b) { return (a + b) * 1.5; },
                              [](double a, double b) { return exact((a != 0 || b != 0) * 1.5); });
  check_op<float, bool>("exp(a * a + a)", rng, {Domain{}}, 4, [](const auto& a) { return weft::exp(a * a + a); },
                        [](double a) { return rel(std::exp(double(a != 0))); });
}
}

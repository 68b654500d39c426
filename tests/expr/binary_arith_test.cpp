// SPDX-License-Identifier: MIT
/// @file + - * / on two tensors of every dtype, and on bool (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("binary + - * / on bfloat16") { run_binary_arith<bfloat16, bfloat16, bfloat16, bfloat16, 1>("bfloat16"); }
TEST_CASE("binary + - * / on float16") { run_binary_arith<half, half, half, half, 1>("float16"); }
TEST_CASE("binary + - * / on float32") { run_binary_arith<float, float, float, float, 1>("float32"); }
TEST_CASE("binary + - * / on float64") { run_binary_arith<double, double, double, double, 1>("float64"); }
TEST_CASE("binary + - * / on int32") { run_binary_arith<std::int32_t, std::int32_t, std::int32_t, float, 1>("int32"); }
TEST_CASE("binary + - * / on int64") { run_binary_arith<std::int64_t, std::int64_t, std::int64_t, float, 1>("int64"); }
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

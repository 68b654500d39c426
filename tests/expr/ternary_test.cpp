// SPDX-License-Identifier: MIT
/// @file clamp, where and lerp on every dtype, with promotion; see ternary_suite.hpp.
/// The ISA-level builds (tests_scope=isa) run the cases of ternary_float32 only: the packet code the other dtypes add is the same.
#include "ternary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("clamp on bfloat16") { run_clamp<bfloat16>("bfloat16"); }
TEST_CASE("where on bfloat16") { run_where<bfloat16>("bfloat16"); }
#endif
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("clamp on float16") { run_clamp<half>("float16"); }
TEST_CASE("where on float16") { run_where<half>("float16"); }
#endif
TEST_CASE("clamp on float32") { run_clamp<float>("float32"); }
TEST_CASE("where on float32") { run_where<float>("float32"); }
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("clamp on float64") { run_clamp<double>("float64"); }
TEST_CASE("where on float64") { run_where<double>("float64"); }
#endif
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("clamp on int32") { run_clamp<std::int32_t>("int32"); }
TEST_CASE("where on int32") { run_where<std::int32_t>("int32"); }
#endif
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("clamp on int64") { run_clamp<std::int64_t>("int64"); }
TEST_CASE("where on int64") { run_where<std::int64_t>("int64"); }
#endif
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("where on bool") { run_where<bool>("bool"); }
TEST_CASE("clamp and where promote with float operands") {
  WEFT_TEST_RNG(rng);
  check_op<float, std::int32_t>("clamp(int32, 1, 2.5) -> float32", rng, {Domain{-5, 5}}, 0,
                                [](const auto& x) { return weft::clamp(x, 1, 2.5); },
                                [](double x) { return exact(std::min(std::max(x, 1.0), 2.5)); });
  Domain d{-8, 8, false, true, 0, 0, 0.02, 0.25};
  check_op<float, bool, half, float>("where(c, float16, float32) -> float32", rng, {Domain{}, d, d}, 0,
                                     [](const auto& c, const auto& a, const auto& b) { return weft::where(c, a, b); },
                                     [](double c, double a, double b) { return exact(c != 0 ? a : b); });
}
#endif
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("lerp on float16") { run_lerp<half>("float16"); }
TEST_CASE("lerp on bfloat16") { run_lerp<bfloat16>("bfloat16"); }
#endif
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("lerp on float32") { run_lerp<float>("float32"); }
TEST_CASE("lerp on float64") { run_lerp<double>("float64"); }
#endif
}

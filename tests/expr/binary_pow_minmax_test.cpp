// SPDX-License-Identifier: MIT
/// @file pow, maximum and minimum on two tensors of every dtype; see binary_suite.hpp.
/// The ISA-level builds (tests_scope=isa) run the cases of binary_pow_minmax_float32 only: the packet code the other dtypes add is the same.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("binary pow maximum minimum on bfloat16") { run_binary_arith<bfloat16, bfloat16, bfloat16, bfloat16, 2>("bfloat16"); }
#endif
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("binary pow maximum minimum on float16") { run_binary_arith<half, half, half, half, 2>("float16"); }
#endif
TEST_CASE("binary pow maximum minimum on float32") { run_binary_arith<float, float, float, float, 2>("float32"); }
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("binary pow maximum minimum on float64") { run_binary_arith<double, double, double, double, 2>("float64"); }
#endif
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("binary pow maximum minimum on int32") { run_binary_arith<std::int32_t, std::int32_t, std::int32_t, float, 2>("int32"); }
#endif
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("binary pow maximum minimum on int64") { run_binary_arith<std::int64_t, std::int64_t, std::int64_t, float, 2>("int64"); }
#endif
}

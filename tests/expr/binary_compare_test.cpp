// SPDX-License-Identifier: MIT
/// @file comparisons on two tensors of every dtype (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
/// The ISA-level builds (tests_scope=isa) run the cases of binary_compare_float32 only: the packet code the other dtypes add is the same.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("comparisons < <= > on bfloat16") { run_binary_compare<bfloat16, bfloat16, 1>("bfloat16"); }
TEST_CASE("comparisons >= == != on bfloat16") { run_binary_compare<bfloat16, bfloat16, 2>("bfloat16"); }
#endif
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("comparisons < <= > on float16") { run_binary_compare<half, half, 1>("float16"); }
TEST_CASE("comparisons >= == != on float16") { run_binary_compare<half, half, 2>("float16"); }
#endif
TEST_CASE("comparisons < <= > on float32") { run_binary_compare<float, float, 1>("float32"); }
TEST_CASE("comparisons >= == != on float32") { run_binary_compare<float, float, 2>("float32"); }
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("comparisons < <= > on float64") { run_binary_compare<double, double, 1>("float64"); }
TEST_CASE("comparisons >= == != on float64") { run_binary_compare<double, double, 2>("float64"); }
#endif
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("comparisons < <= > on int32") { run_binary_compare<std::int32_t, std::int32_t, 1>("int32"); }
TEST_CASE("comparisons >= == != on int32") { run_binary_compare<std::int32_t, std::int32_t, 2>("int32"); }
#endif
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("comparisons < <= > on int64") { run_binary_compare<std::int64_t, std::int64_t, 1>("int64"); }
TEST_CASE("comparisons >= == != on int64") { run_binary_compare<std::int64_t, std::int64_t, 2>("int64"); }
#endif
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("comparisons on bool") { run_binary_compare<bool, bool>("bool"); }
#endif
}

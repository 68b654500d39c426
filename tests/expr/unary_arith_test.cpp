// SPDX-License-Identifier: MIT
/// @file neg, abs, relu, sign, square on every dtype; see unary_suite.hpp.
/// The ISA-level builds (tests_scope=isa) run the cases of unary_arith_int32 only: the packet code the other dtypes add is the same.
#include "unary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("unary dtype-preserving ops on bfloat16") { run_unary_arith_ops<bfloat16>(); }
#endif
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("unary dtype-preserving ops on float16") { run_unary_arith_ops<half>(); }
#endif
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("unary dtype-preserving ops on float32") { run_unary_arith_ops<float>(); }
#endif
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("unary dtype-preserving ops on float64") { run_unary_arith_ops<double>(); }
#endif
TEST_CASE("unary dtype-preserving ops on int32") { run_unary_arith_ops<std::int32_t>(); }
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("unary dtype-preserving ops on int64") { run_unary_arith_ops<std::int64_t>(); }
#endif
}

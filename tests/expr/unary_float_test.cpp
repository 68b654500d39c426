// SPDX-License-Identifier: MIT
/// @file the float-valued unary ops (exp, log, ..., gelu, silu) on every dtype (integers and bool compute in float); see unary_suite.hpp.
/// The ISA-level builds (tests_scope=isa) run the cases of unary_float16, unary_float32, unary_float64 only: the packet code the other dtypes add is the same.
#include "unary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("unary exp log sqrt sin on bfloat16") { run_unary_float_ops<bfloat16, kUnarySubsetA>(); }
TEST_CASE("unary sigmoid gelu reciprocal on bfloat16") { run_unary_float_ops<bfloat16, kUnarySubsetB>(); }
#endif
TEST_CASE("unary exp log log1p expm1 sqrt on float16") { run_unary_float_ops<half, kUnaryFirst>(); }
TEST_CASE("unary rsqrt sin cos tanh sigmoid on float16") { run_unary_float_ops<half, kUnarySecond>(); }
TEST_CASE("unary gelu silu erf reciprocal on float16") { run_unary_float_ops<half, kUnaryThird>(); }
TEST_CASE("unary exp log log1p expm1 sqrt on float32") { run_unary_float_ops<float, kUnaryFirst>(); }
TEST_CASE("unary rsqrt sin cos tanh sigmoid on float32") { run_unary_float_ops<float, kUnarySecond>(); }
TEST_CASE("unary gelu silu erf reciprocal on float32") { run_unary_float_ops<float, kUnaryThird>(); }
TEST_CASE("unary exp log log1p expm1 sqrt on float64") { run_unary_float_ops<double, kUnaryFirst>(); }
TEST_CASE("unary rsqrt sin cos tanh sigmoid on float64") { run_unary_float_ops<double, kUnarySecond>(); }
TEST_CASE("unary gelu silu erf reciprocal on float64") { run_unary_float_ops<double, kUnaryThird>(); }
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("unary exp log log1p expm1 sqrt on int32") { run_unary_float_ops<std::int32_t, kUnaryFirst>(); }
TEST_CASE("unary rsqrt sin cos tanh sigmoid on int32") { run_unary_float_ops<std::int32_t, kUnarySecond>(); }
TEST_CASE("unary erf reciprocal on int32") { run_unary_float_ops<std::int32_t, kUnaryThirdInt>(); }
#endif
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("unary exp log sqrt sin on int64") { run_unary_float_ops<std::int64_t, kUnarySubsetA>(); }
TEST_CASE("unary sigmoid erf reciprocal on int64") { run_unary_float_ops<std::int64_t, kUnarySubsetBInt>(); }
#endif
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("unary exp log sqrt sin on bool") { run_unary_float_ops<bool, kUnarySubsetA>(); }
TEST_CASE("unary sigmoid erf reciprocal on bool") { run_unary_float_ops<bool, kUnarySubsetBInt>(); }
#endif
}

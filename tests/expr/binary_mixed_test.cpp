// SPDX-License-Identifier: MIT
/// @file binary ops on two tensors of different dtypes: the promoted result (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("mixed bool, bfloat16 -> bfloat16: + *") { run_binary_mixed<bool, bfloat16, bfloat16, bfloat16, 1>("bool,bfloat16"); }
TEST_CASE("mixed bool, bfloat16 -> bfloat16: / < maximum") { run_binary_mixed<bool, bfloat16, bfloat16, bfloat16, 2>("bool,bfloat16"); }
TEST_CASE("mixed bool, int32 -> int32: + *") { run_binary_mixed<bool, std::int32_t, std::int32_t, float, 1>("bool,int32"); }
TEST_CASE("mixed bool, int32 -> int32: / < maximum") { run_binary_mixed<bool, std::int32_t, std::int32_t, float, 2>("bool,int32"); }
TEST_CASE("mixed float16, bfloat16 -> float32: + *") { run_binary_mixed<half, bfloat16, float, float, 1>("float16,bfloat16"); }
TEST_CASE("mixed float16, bfloat16 -> float32: / < maximum") { run_binary_mixed<half, bfloat16, float, float, 2>("float16,bfloat16"); }
TEST_CASE("mixed float16, float32 -> float32: + *") { run_binary_mixed<half, float, float, float, 1>("float16,float32"); }
TEST_CASE("mixed float16, float32 -> float32: / < maximum") { run_binary_mixed<half, float, float, float, 2>("float16,float32"); }
TEST_CASE("mixed float32, float64 -> float64: + *") { run_binary_mixed<float, double, double, double, 1>("float32,float64"); }
TEST_CASE("mixed float32, float64 -> float64: / < maximum") { run_binary_mixed<float, double, double, double, 2>("float32,float64"); }
TEST_CASE("mixed int32, float32 -> float32: + *") { run_binary_mixed<std::int32_t, float, float, float, 1>("int32,float32"); }
TEST_CASE("mixed int32, float32 -> float32: / < maximum") { run_binary_mixed<std::int32_t, float, float, float, 2>("int32,float32"); }
TEST_CASE("mixed int32, int64 -> int64: + *") { run_binary_mixed<std::int32_t, std::int64_t, std::int64_t, float, 1>("int32,int64"); }
TEST_CASE("mixed int32, int64 -> int64: / < maximum") { run_binary_mixed<std::int32_t, std::int64_t, std::int64_t, float, 2>("int32,int64"); }
TEST_CASE("mixed int64, float16 -> float16: + *") { run_binary_mixed<std::int64_t, half, half, half, 1>("int64,float16"); }
TEST_CASE("mixed int64, float16 -> float16: / < maximum") { run_binary_mixed<std::int64_t, half, half, half, 2>("int64,float16"); }
}

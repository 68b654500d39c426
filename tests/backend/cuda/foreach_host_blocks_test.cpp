// SPDX-License-Identifier: MIT
/// @file The cuda suite's foreach bodies (foreach_suite.hpp) on the foreach kernel's per-block
/// body (cuda::run_foreach_block, the function every GPU block runs), executed on the host for every
/// block of every launch the planner packs, over CPU tensors (foreach_emulated_on_host.hpp): random
/// lists of every float dtype, one-element tensor operands, long lists in several launches. Plain
/// C++: g++ compiles it, and it runs without a GPU.
#include <doctest/doctest.h>

#include "backend/cuda/foreach_emulated_on_host.hpp"
#include "backend/cuda/foreach_suite.hpp"

using namespace foreach_suite;

TEST_SUITE("cuda") {

TEST_CASE_TEMPLATE("foreach blocks on the host: out = p - lr * g and p -= lr * g over random lists", T, float,
                   double, weft::half, weft::bfloat16) {
  for (int round = 0; round < 2; ++round) axpy_over_random_lists<ForeachEmulatedOnHost, T>();
}

TEST_CASE("foreach blocks on the host: a one-element tensor operand, and two lists swapped") {
  for (int round = 0; round < 3; ++round) single_tensor_operand_and_swap<ForeachEmulatedOnHost>();
}

TEST_CASE("foreach blocks on the host: long lists in several launches, tensors continuing in the next") {
  const auto split_before = ForeachEmulatedOnHost::split_tensors;
  const auto multi_before = ForeachEmulatedOnHost::multi_launch_runs;
  for (int round = 0; round < 3; ++round) long_list_with_large_tensors<ForeachEmulatedOnHost>(3000, 3);
  CHECK(ForeachEmulatedOnHost::split_tensors > split_before);
  CHECK(ForeachEmulatedOnHost::multi_launch_runs > multi_before);
}

TEST_CASE("foreach blocks on the host: the tests reach every table, the vector and the scalar path") {
  axpy_over_random_lists<ForeachEmulatedOnHost, float>();
  for (int config = 0; config < ForeachEmulatedOnHost::configs; ++config) {
    CAPTURE(config);
    CHECK(ForeachEmulatedOnHost::runs[config] > 0);
  }
  CHECK(ForeachEmulatedOnHost::vector_blocks > 0);
  CHECK(ForeachEmulatedOnHost::scalar_blocks > 0);
  CHECK(ForeachEmulatedOnHost::multi_launch_runs > 0);
  CHECK(ForeachEmulatedOnHost::split_tensors > 0);
}

}  // TEST_SUITE("cuda")

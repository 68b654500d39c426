// SPDX-License-Identifier: MIT
/// @file cpu: a file built with WEFT_PRECOMPILED_KERNELS, linked with the weft_kernels library (src/kernels.cpp): it parses no Eigen, and matmul (Eigen's kernels and the FMA GEMM) and attention (flash and math, forward and backward) in float and double match double-precision references.
#include <weft/weft.hpp>

// The point of the option: weft's headers declare the kernels and leave Eigen's headers out.
#if !defined(WEFT_PRECOMPILED_KERNELS)
#error "build this file with weft_kernels_dep (tests/meson.build: test_precompiled)"
#elif defined(EIGEN_WORLD_VERSION)
#error "weft.hpp included Eigen's headers under WEFT_PRECOMPILED_KERNELS"
#endif

#include "../../nn/sdpa_suite.hpp"
#include "matmul_reference.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {

TEST_CASE("precompiled kernels: matmul on Eigen's kernels and the FMA GEMM, float and double") {
  WEFT_TEST_RNG(rng);
  random_matmuls<float>(rng, 20);
  random_matmuls<double>(rng, 10);
  // Above 2^21 multiply-adds: the FMA GEMM without being forced, one product over the threads.
  check_matmul<float>(operand<float>(rng, Shape{301, 515}), operand<float>(rng, Shape{515, 131}));
  check_matmul<double>(operand<double>(rng, Shape{2, 140, 260}), operand<double>(rng, Shape{260, 70}));
  const FmaGemmAlways fma;
  random_matmuls<float>(rng, 20);
  random_matmuls<double>(rng, 10);
}

TEST_CASE("precompiled kernels: attention, flash and math backends, forward and backward, float and double") {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 12; ++iter) check_random_case<float>(rng);
  for (int iter = 0; iter < 6; ++iter) check_random_case<double>(rng);
}

}

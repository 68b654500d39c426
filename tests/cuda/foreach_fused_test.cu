// SPDX-License-Identifier: MIT
/// @file The cuda suite for fused foreach kernels on a GPU: an AdamW step over mixed dtypes with a
/// ScalarList, a one-element tensor operand, swapped lists, and long lists in several launches
/// (bodies in foreach_suite.hpp).
#include <doctest/doctest.h>

#include <cstddef>
#include <string>

#include "cuda/foreach_suite.hpp"
#include "cuda_support.hpp"
#include "log_capture.hpp"

using namespace foreach_suite;
using weft::test::cuda_available;

TEST_SUITE("cuda") {

TEST_CASE("foreach on cuda: a fused AdamW step over bf16, float and half lists with a ScalarList" *
          doctest::skip(!cuda_available())) {
  for (std::size_t length : {1, 2, 37, 1000}) {
    CAPTURE(length);
    adamw_mixed_dtypes<OnCuda>(length);
  }
}

TEST_CASE("foreach on cuda: a one-element tensor operand, and two lists swapped" * doctest::skip(!cuda_available())) {
  single_tensor_operand_and_swap<OnCuda>();
}

TEST_CASE("foreach on cuda: a long list in several launches, a tensor continuing in the next; logs" *
          doctest::skip(!cuda_available())) {
  weft_test::LogCapture capture;
  weft::set_logs("foreach,cuda");
  long_list_with_large_tensors<OnCuda>(6000, 8);
  weft::set_logs("");
  const std::string text = capture.text();
  capture.restore();
  CAPTURE(text);
  CHECK(text.find("foreach on cuda:0:") != std::string::npos);
  CHECK(text.find("foreach launch 2/") != std::string::npos);
  CHECK(text.find("continues") != std::string::npos);
}

}  // TEST_SUITE("cuda")

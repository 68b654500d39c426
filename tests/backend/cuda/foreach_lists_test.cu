// SPDX-License-Identifier: MIT
/// @file The cuda suite for foreach kernels over awkward lists on a GPU: a one-element tensor
/// operand, two lists swapped in one kernel, and a long list in several launches with a tensor
/// continuing into the next (bodies in foreach_suite.hpp).
#include <doctest/doctest.h>

#include <string>

#include "backend/cuda/foreach_suite.hpp"
#include "cuda_support.hpp"
#include "log_capture.hpp"

using namespace foreach_suite;
using weft::test::cuda_available;

TEST_SUITE("cuda") {

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

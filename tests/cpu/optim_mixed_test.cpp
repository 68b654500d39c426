// SPDX-License-Identifier: MIT
/// @file cpu: bfloat16 parameters with float32 optimizer state, with and without float32 master
/// weights, against torch run in float32 with bf16-rounded parameters (see optim_suite.hpp). The
/// mixed-precision machinery is the optimizer base's, shared by all; SGD (with a state that starts
/// as the gradient) and AdamW (step-dependent bias corrections, decoupled decay) cover its paths.
#include "optim_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("bf16 parameters with float32 state: SGD and AdamW") {
  check_golden_bf16<optim::SGD>("sgd_dampening_wd", false);
  check_golden_bf16<optim::SGD>("sgd_nesterov", false);
  for (const char* name : {"adamw_default", "adamw_amsgrad_wd", "adamw_maximize"}) check_golden_bf16<optim::AdamW>(name, true);
}
}

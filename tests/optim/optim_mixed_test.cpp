// SPDX-License-Identifier: MIT
/// @file cpu: bfloat16 parameters with float32 optimizer state, with and without float32 master
/// weights, against torch run in float32 with bf16-rounded parameters (see optim_suite.hpp). The
/// mixed-precision machinery is the optimizer base's, shared by all optimizers; AdamW (bias
/// corrections, decoupled decay, amsgrad's extra state) covers its paths. The path with the step
/// count on the device (CUDA's) is checked for every optimizer in float64 (optim_golden_test.cpp, optim_device_step_test.cpp), so
/// it is not run here, and the float64 reference comes from optim_f32_test.cpp
/// (adamw_reference_f64) rather than being compiled a second time.
#include "optim_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("bf16 parameters with float32 state and master weights: AdamW") {
  for (const char* name : kAdamWGoldens) check_golden_bf16<optim::AdamW>(name, &adamw_reference_f64);
}
}

// SPDX-License-Identifier: MIT
/// @file cpu: RMSprop (centered, momentum) on CUDA's path, run on the CPU's executor against
/// torch's float64 trajectories (see optim_device_step_adam_test.cpp).
#include "optim_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("RMSprop with the step count on the device matches torch.optim.RMSprop in float64") {
  for (const char* name : kRmspropGoldens) check_golden_f64_device_step<optim::RMSprop>(name);
}
}

// SPDX-License-Identifier: MIT
/// @file the step with the count on the device (DeviceStep, as CUDA parameters run it), on CPU tensors; see optim_suite.hpp.
#include "optim_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
// Adam and AdamW on CUDA's path (the step count a one-element tensor, skips decided per element), run on the CPU's executor against torch's float64 trajectories.
TEST_CASE("Adam and AdamW with the step count on the device match torch.optim in float64") {
  for (const char* name : kAdamGoldens) check_golden_f64_device_step<optim::Adam>(name);
  for (const char* name : kAdamWGoldens) check_golden_f64_device_step<optim::AdamW>(name);
}
// RMSprop (centered, momentum) on CUDA's path, run on the CPU's executor against torch's float64 trajectories.
TEST_CASE("RMSprop with the step count on the device matches torch.optim.RMSprop in float64") {
  for (const char* name : kRmspropGoldens) check_golden_f64_device_step<optim::RMSprop>(name);
}
// SGD, Adagrad and Lion on CUDA's path, run on the CPU's executor against their float64 golden trajectories.
TEST_CASE("SGD, Adagrad and Lion with the step count on the device match their references in float64") {
  for (const char* name : kSgdGoldens) check_golden_f64_device_step<optim::SGD>(name);
  for (const char* name : kAdagradGoldens) check_golden_f64_device_step<optim::Adagrad>(name);
  for (const char* name : kLionGoldens) check_golden_f64_device_step<optim::Lion>(name);
}
}

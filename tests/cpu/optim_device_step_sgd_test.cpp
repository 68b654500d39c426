// SPDX-License-Identifier: MIT
/// @file cpu: SGD, Adagrad and Lion on CUDA's path, run on the CPU's executor against their
/// float64 golden trajectories (see optim_device_step_adam_test.cpp).
#include "optim_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("SGD, Adagrad and Lion with the step count on the device match their references in float64") {
  for (const char* name : kSgdGoldens) check_golden_f64_device_step<optim::SGD>(name);
  for (const char* name : kAdagradGoldens) check_golden_f64_device_step<optim::Adagrad>(name);
  for (const char* name : kLionGoldens) check_golden_f64_device_step<optim::Lion>(name);
}
}

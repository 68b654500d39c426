// SPDX-License-Identifier: MIT
/// @file cpu: Adam and AdamW on CUDA's path, the step count a one-element tensor and skips decided
/// per element, run on the CPU's executor against torch's float64 trajectories (see
/// optim_suite.hpp). Where there is no GPU, these files (optim_device_step_*_test.cpp) check the
/// expressions CUDA steps compile; the host path's checks are in optim_<name>_test.cpp.
#include "optim_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("Adam and AdamW with the step count on the device match torch.optim in float64") {
  for (const char* name : kAdamGoldens) check_golden_f64_device_step<optim::Adam>(name);
  for (const char* name : kAdamWGoldens) check_golden_f64_device_step<optim::AdamW>(name);
}
}

// SPDX-License-Identifier: MIT
/// @file cpu: Adam in float32 against its float64 run on the same inputs (see optim_suite.hpp); the
/// float64 optimizer compiles in optim_adam_test.cpp (adam_reference_f64).
#include "optim_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("Adam in float32 follows its float64 trajectory") {
  for (const char* name : kAdamGoldens) check_golden_f32<optim::Adam>(name, &adam_reference_f64);
}
}

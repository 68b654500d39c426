// SPDX-License-Identifier: MIT
/// @file cpu: RMSprop in float32 against its float64 run on the same inputs (see optim_suite.hpp); the
/// float64 optimizer compiles in optim_rmsprop_test.cpp (rmsprop_reference_f64).
#include "optim_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("RMSprop in float32 follows its float64 trajectory") {
  for (const char* name : kRmspropGoldens) check_golden_f32<optim::RMSprop>(name, &rmsprop_reference_f64);
}
}

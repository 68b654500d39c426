// SPDX-License-Identifier: MIT
/// @file Adam, AdamW and RMSprop in float32 against their float64 trajectories on the same inputs; see optim_suite.hpp.
#include "optim_suite.hpp"

using namespace weft_test;

namespace weft_test {
Trajectory adam_reference_f64(const OptimGolden& g) { return reference_f64<optim::Adam>(g); }
Trajectory adamw_reference_f64(const OptimGolden& g) { return reference_f64<optim::AdamW>(g); }
Trajectory rmsprop_reference_f64(const OptimGolden& g) { return reference_f64<optim::RMSprop>(g); }
}  // namespace weft_test

TEST_SUITE("cpu") {
// Adam in float32 against its float64 run on the same inputs (adam_reference_f64, above).
TEST_CASE("Adam in float32 follows its float64 trajectory") {
  for (const char* name : kAdamGoldens) check_golden_f32<optim::Adam>(name, &adam_reference_f64);
}
// AdamW in float32 against its float64 run on the same inputs (adamw_reference_f64).
TEST_CASE("AdamW in float32 follows its float64 trajectory") {
  for (const char* name : kAdamWGoldens) check_golden_f32<optim::AdamW>(name, &adamw_reference_f64);
}
// RMSprop in float32 against its float64 run on the same inputs (rmsprop_reference_f64).
TEST_CASE("RMSprop in float32 follows its float64 trajectory") {
  for (const char* name : kRmspropGoldens) check_golden_f32<optim::RMSprop>(name, &rmsprop_reference_f64);
}
}

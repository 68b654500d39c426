// SPDX-License-Identifier: MIT
/// @file cpu: RMSprop against torch.optim.RMSprop in float64 (golden trajectories; see
/// optim_suite.hpp), and the float64 reference its float32 checks (optim_rmsprop_f32_test.cpp) use.
#include "optim_suite.hpp"

namespace weft_test {
Trajectory rmsprop_reference_f64(const OptimGolden& g) { return reference_f64<optim::RMSprop>(g); }
}  // namespace weft_test

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("RMSprop matches torch.optim.RMSprop in float64") {
  for (const char* name : kRmspropGoldens) check_golden_f64<optim::RMSprop>(name);
}
}

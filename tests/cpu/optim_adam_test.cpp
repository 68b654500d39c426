// SPDX-License-Identifier: MIT
/// @file cpu: Adam against torch.optim.Adam in float64 (golden trajectories; see optim_suite.hpp), and
/// the float64 reference its float32 checks (optim_adam_f32_test.cpp) compare with.
#include "optim_suite.hpp"

namespace weft_test {
Trajectory adam_reference_f64(const OptimGolden& g) { return reference_f64<optim::Adam>(g); }
}  // namespace weft_test

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("Adam matches torch.optim.Adam in float64") {
  for (const char* name : kAdamGoldens) check_golden_f64<optim::Adam>(name);
}
}

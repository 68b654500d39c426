// SPDX-License-Identifier: MIT
/// @file cpu: AdamW against torch.optim.AdamW in float64 (golden trajectories; see optim_suite.hpp), and
/// the float64 reference its float32 checks (optim_adamw_f32_test.cpp) compare with.
#include "optim_suite.hpp"

namespace weft_test {
Trajectory adamw_reference_f64(const OptimGolden& g) { return reference_f64<optim::AdamW>(g); }
}  // namespace weft_test

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("AdamW matches torch.optim.AdamW in float64") {
  for (const char* name : kAdamWGoldens) check_golden_f64<optim::AdamW>(name);
}
}

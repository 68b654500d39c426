// SPDX-License-Identifier: MIT
/// @file cpu: SGD against torch.optim.SGD (golden trajectories; see optim_suite.hpp).
#include "optim_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("SGD matches torch.optim.SGD") {
  for (const char* name : kSgdGoldens) {
    check_golden_f64<optim::SGD>(name);
    check_golden_f32<optim::SGD>(name);
  }
}
}

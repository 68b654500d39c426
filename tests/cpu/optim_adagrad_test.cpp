// SPDX-License-Identifier: MIT
/// @file cpu: Adagrad against torch.optim.Adagrad (golden trajectories; see optim_suite.hpp).
#include "optim_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("Adagrad matches torch.optim.Adagrad") {
  for (const char* name : kAdagradGoldens) {
    check_golden_f64<optim::Adagrad>(name);
    check_golden_f32<optim::Adagrad>(name);
  }
}
}

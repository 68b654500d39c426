// SPDX-License-Identifier: MIT
/// @file cpu: RMSprop against torch.optim.RMSprop (golden trajectories; see optim_suite.hpp).
#include "optim_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("RMSprop matches torch.optim.RMSprop") {
  for (const char* name : {"rmsprop_default", "rmsprop_centered", "rmsprop_momentum", "rmsprop_centered_momentum"}) {
    check_golden_f64<optim::RMSprop>(name);
    check_golden_f32<optim::RMSprop>(name);
  }
}
}

// SPDX-License-Identifier: MIT
/// @file cpu: Adam against torch.optim.Adam (golden trajectories; see optim_suite.hpp).
#include "optim_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("Adam matches torch.optim.Adam") {
  for (const char* name : {"adam_default", "adam_amsgrad", "adam_wd_maximize", "adam_schedule"}) {
    check_golden_f64<optim::Adam>(name);
    check_golden_f32<optim::Adam>(name);
  }
}
}

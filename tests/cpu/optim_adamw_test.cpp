// SPDX-License-Identifier: MIT
/// @file cpu: AdamW against torch.optim.AdamW (golden trajectories; see optim_suite.hpp).
#include "optim_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("AdamW matches torch.optim.AdamW") {
  for (const char* name : {"adamw_default", "adamw_amsgrad_wd", "adamw_maximize"}) {
    check_golden_f64<optim::AdamW>(name);
    check_golden_f32<optim::AdamW>(name);
  }
}
}

// SPDX-License-Identifier: MIT
/// @file cpu: Lion against the reference in make_optim_golden.py (Lion is not in torch.optim) (golden trajectories; see optim_suite.hpp).
#include "optim_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("Lion matches the reference Lion (Chen et al. 2023)") {
  for (const char* name : kLionGoldens) {
    check_golden_f64<optim::Lion>(name);
    check_golden_f32<optim::Lion>(name);
  }
}
}

// SPDX-License-Identifier: MIT
/// @file every optimizer in float64 against PyTorch goldens (tests/golden/make_optim.py); see optim_suite.hpp.
#include "optim_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
// SGD against torch.optim.SGD (golden trajectories), float64 and float32.
TEST_CASE("SGD matches torch.optim.SGD") {
  for (const char* name : kSgdGoldens) {
    check_golden_f64<optim::SGD>(name);
    check_golden_f32<optim::SGD>(name);
  }
}
// Adam against torch.optim.Adam in float64.
TEST_CASE("Adam matches torch.optim.Adam in float64") {
  for (const char* name : kAdamGoldens) check_golden_f64<optim::Adam>(name);
}
// AdamW against torch.optim.AdamW in float64.
TEST_CASE("AdamW matches torch.optim.AdamW in float64") {
  for (const char* name : kAdamWGoldens) check_golden_f64<optim::AdamW>(name);
}
// Adagrad against torch.optim.Adagrad (golden trajectories), float64 and float32.
TEST_CASE("Adagrad matches torch.optim.Adagrad") {
  for (const char* name : kAdagradGoldens) {
    check_golden_f64<optim::Adagrad>(name);
    check_golden_f32<optim::Adagrad>(name);
  }
}
// RMSprop against torch.optim.RMSprop in float64.
TEST_CASE("RMSprop matches torch.optim.RMSprop in float64") {
  for (const char* name : kRmspropGoldens) check_golden_f64<optim::RMSprop>(name);
}
// Lion against the reference in make_optim_golden.py (Lion is not in torch.optim).
TEST_CASE("Lion matches the reference Lion (Chen et al. 2023)") {
  for (const char* name : kLionGoldens) {
    check_golden_f64<optim::Lion>(name);
    check_golden_f32<optim::Lion>(name);
  }
}
}

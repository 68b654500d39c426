// SPDX-License-Identifier: MIT
/// @file The README's example, compiled and run by the test script so the snippet cannot rot.
//
// The lines between the markers are the README's code block, verbatim.
// Run it with WEFT_LOGS=fusion to see each fused kernel as it runs.
// example-begin readme
#include <weft/weft.hpp>

int main() {
  auto a = weft::rand<float>({1024, 1024}, /*seed=*/1), b = weft::randn<float>({1024, 1024}, 2);
  auto bias = weft::randn<float>({1024}, 3);
  auto y = weft::eval(a * weft::sigmoid(b) + bias);  // 1 kernel; bias broadcasts over rows
  auto m = weft::zeros<float>({1024, 1024}), p = weft::randn<float>({1024, 1024}, 4);
  auto m1 = 0.9 * m + y;  // a named subexpression: computed once per element
  weft::fuse(weft::assign(m, m1), weft::assign(p, p - 1e-3 * m1));  // 2 outputs, 1 kernel
}
// example-end

// SPDX-License-Identifier: MIT
/// @file The program each consumer project (meson/, cmake_find_package/, cmake_fetchcontent/) builds against an installed or fetched weft.
//
// It proves the build system's target carries what weft needs (headers, C++20, Eigen, OpenMP):
// one fused expression with a broadcast, checked against a double reference; exit code 0 when
// every element agrees.
#include <weft/weft.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  auto a = weft::rand<float>({64, 33}, /*seed=*/1), b = weft::randn<float>({64, 33}, 2);
  auto bias = weft::randn<float>({33}, 3);
  auto y = weft::eval(a * weft::sigmoid(b) + bias);  // one kernel; bias broadcasts over rows

  const std::vector<float> av = a.to_vector(), bv = b.to_vector(), cv = bias.to_vector(), yv = y.to_vector();
  int bad = 0;
  for (std::size_t i = 0; i < yv.size(); ++i) {
    const double want = double(av[i]) / (1.0 + std::exp(-double(bv[i]))) + double(cv[i % 33]);
    // float32 sigmoid, product and sum: a few ulp of |want| + |bias|.
    if (!(std::abs(yv[i] - want) <= 1e-6 * (std::abs(want) + std::abs(cv[i % 33]) + 1))) ++bad;
  }
  std::printf("weft consumer: %zu elements, %d wrong\n", yv.size(), bad);
  return bad == 0 && yv.size() == 64 * 33 ? 0 : 1;
}

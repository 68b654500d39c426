// SPDX-License-Identifier: MIT
/// @file Checks of random draws: the chi-square statistic of category counts and its Wilson-Hilferty z-score; a scope that restores the global generator.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include <weft/core/generator.hpp>

namespace weft_test {

/// The global generator's state, restored at the end of a test that reseeds it (other tests may
/// rely on the draws their own manual_seed started).
struct GlobalGeneratorScope {
  std::uint64_t seed = weft::initial_seed(), offset = weft::default_generator().offset();
  ~GlobalGeneratorScope() {
    weft::manual_seed(seed);
    weft::default_generator().set_offset(offset);
  }
};

/// sum over cells of (observed - expected)^2 / expected.
inline double chi_square(const std::vector<double>& observed, const std::vector<double>& expected) {
  double x = 0;
  for (std::size_t i = 0; i < observed.size(); ++i) x += (observed[i] - expected[i]) * (observed[i] - expected[i]) / expected[i];
  return x;
}

/// How many standard deviations a chi-square value with `df` degrees of freedom lies above its
/// mean, after Wilson and Hilferty's cube-root transform ((x / df)^(1/3) is nearly normal with mean
/// 1 - 2 / (9 df) and variance 2 / (9 df)): z < 5 fails a correct sampler with probability ~3e-7,
/// while a wrong distribution over thousands of draws lands tens of deviations out.
inline double chi_square_z(double x, double df) {
  const double v = 2.0 / (9.0 * df);
  return (std::cbrt(x / df) - (1 - v)) / std::sqrt(v);
}

}  // namespace weft_test

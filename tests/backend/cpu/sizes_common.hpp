// SPDX-License-Identifier: MIT
/// @file The float32 chain the size tests run (sizes.cpp, sizes_large.cpp), and its check.
#pragma once

#include "pointwise_check.hpp"

namespace weft_test {

/// y = a * sigmoid(b) + c for float32, checked element by element (sigmoid 4 ulp, then a product
/// and a sum: 6 ulp of the largest term).
inline void check_float_chain(const weft::TensorBase<float>& y, const weft::TensorBase<float>& a, const weft::TensorBase<float>& b, const weft::TensorBase<float>& c) {
  std::vector<double> av = broadcast_values(a, y.shape()), bv = broadcast_values(b, y.shape()),
                      cv = broadcast_values(c, y.shape());
  std::vector<Expect> want(av.size());
  for (std::size_t i = 0; i < av.size(); ++i) {
    double p = av[i] / (1 + std::exp(-bv[i])), v = p + cv[i];
    want[i] = {v, 6 * 0x1p-23 * (std::fabs(p) + std::fabs(cv[i]))};
  }
  WEFT_CHECK_REPORT(check_output(y, want));
}

}  // namespace weft_test

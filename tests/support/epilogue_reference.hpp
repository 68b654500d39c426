// SPDX-License-Identifier: MIT
/// @file What the GEMM-epilogue tests share: the exact product at one output element with its
/// error bound, gelu in double, and whether a statement ran as an epilogue (the fusion log).
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "log_capture.hpp"
#include "matmul_reference.hpp"

namespace weft_test {

inline constexpr const char* kEpilogueMark = "epilogue on each output block";

/// The product p = a b at one output index (batch..., i, j), in double, with the bound of any
/// summation order in T (check_matmul's: (k + 2) eps sum |a b|).
template <class T>
struct EpilogueProduct {
  double value, tol;
};
template <class T>
EpilogueProduct<T> epilogue_product(const TensorView<T>& a, const TensorView<T>& b, const Shape& batch,
                                    const std::vector<std::int64_t>& idx) {
  const std::int64_t k = a.shape()[a.dim() - 1];
  const int nb = batch.rank();
  auto batch_index = [&](const TensorView<T>& x) {  // x's batch dims, right-aligned, broadcast
    std::vector<std::int64_t> out;
    for (int d = 0; d + 2 < x.dim(); ++d) {
      const std::int64_t full = idx[std::size_t(nb - (x.dim() - 2) + d)];
      out.push_back(x.shape()[d] == 1 ? 0 : full);
    }
    return out;
  };
  // Built once; only the k slots move in the loop.
  std::vector<std::int64_t> ia = batch_index(a), ib = batch_index(b);
  ia.push_back(idx[std::size_t(nb)]), ia.push_back(0);
  ib.push_back(0), ib.push_back(idx[std::size_t(nb) + 1]);
  CompensatedSum dot, mag;
  for (std::int64_t kk = 0; kk < k; ++kk) {
    ia[ia.size() - 1] = kk;
    ib[ib.size() - 2] = kk;
    const double x = value_at(a, ia) * value_at(b, ib);
    dot.add(x);
    mag.add(std::fabs(x));
  }
  return {dot.value(), double(k + 2) * compute_eps<T>() * mag.value()};
}

inline double epilogue_gelu(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }

/// Runs `statement` with the fusion log captured; returns whether it ran as an epilogue.
inline bool ran_as_epilogue(const std::function<void()>& statement) {
  return fusion_log_of(statement).find(kEpilogueMark) != std::string::npos;
}

}  // namespace weft_test

// SPDX-License-Identifier: MIT
/// @file List reductions: per-tensor norms (foreach_norm), the global norm, and clip_grad_norm.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "weft/backend/reduce.hpp"
#include "weft/core/tensor_list.hpp"
#include "weft/ops/factories.hpp"
#include "weft/ops/fuse.hpp"

namespace weft {

/// dtype of a norm of T values: float for 16-bit floats and integers, else T.
template <class T>
using norm_t = math_t<to_floating_t<T>>;

namespace detail {

inline void check_norm_order(const char* op, double p) {
  if (!(p > 0)) fail(op, "norm order p must be positive (or infinity), got ", p);
}

}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// The p-norm of each tensor of `list` (shape [list.size()]), in one pass over all elements.
template <Element T>
Tensor<norm_t<T>> foreach_norm(const TensorList<T>& list, double p = 2) {
  detail::check_norm_order("foreach_norm", p);
  detail::ForeachNormOrder kind{p};
  std::vector<double> partials = detail::foreach_norm_partials(list, kind, "foreach_norm");
  std::vector<norm_t<T>> norms;
  for (double v : partials) norms.push_back(norm_t<T>(kind.finish(v)));
  return from_vector(norms, Shape{std::int64_t(norms.size())});
}

/// The p-norm of all elements of all tensors of `list` (a 0-dim tensor).
template <Element T>
Tensor<norm_t<T>> global_norm(const TensorList<T>& list, double p = 2) {
  detail::check_norm_order("global_norm", p);
  detail::ForeachNormOrder kind{p};
  double total = 0;
  for (double v : detail::foreach_norm_partials(list, kind, "global_norm")) total = kind.combine(total, v);
  return from_vector(std::vector<norm_t<T>>{norm_t<T>(kind.finish(total))}, Shape{});
}

/// Scales `grads` in place so that their global p-norm is at most max_norm
/// (torch.nn.utils.clip_grad_norm_: coef = max_norm / (norm + 1e-6), applied
/// when below 1). One reduction pass, then one foreach scaling kernel, skipped
/// when no scaling is needed. Returns the norm before clipping.
template <Element T>
Tensor<norm_t<T>> clip_grad_norm(TensorList<T>& grads, double max_norm, double p = 2) {
  if (!(max_norm >= 0)) detail::fail("clip_grad_norm", "max_norm must be >= 0, got ", max_norm);
  Tensor<norm_t<T>> norm = global_norm(grads, p);
  const double coef = max_norm / (double(norm.item()) + 1e-6);
  if (coef < 1) grads *= coef;
  return norm;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft

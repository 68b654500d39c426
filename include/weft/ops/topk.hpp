// SPDX-License-Identifier: MIT
/// @file topk: the k largest (or smallest) elements along one dim and their int64 indices.
#pragma once

#include <cstdint>

#include "weft/backend/along_dim.hpp"
#include "weft/ops/along_dim.hpp"
#include "weft/ops/factories.hpp"

namespace weft {

/// topk's result: the chosen elements and their indices along the dim, both shaped like the
/// input with that dim cut to k.
template <class T>
struct TopK {
  Tensor<T> values;
  Tensor<std::int64_t> indices;
};

namespace detail {
inline namespace WEFT_BACKEND_ABI {

template <class T>
TopK<T> topk_impl(const TensorView<const T>& x, std::int64_t k, std::int64_t dim, bool largest, bool sorted) {
  const char* op = "topk";
  const int d = check_along_dim(op, x, &dim);
  const DimRows rows = rows_along(x.shape(), d);
  if (k < 0 || k > rows.n)
    fail(op, "k = ", k, " is out of range for dim ", d, " of size ", rows.n, " (input shape ", x.shape(),
         "); k must be in [0, ", rows.n, "]");
  // A 0-dim input gives 0-dim outputs: its element and index 0, for k = 0 too (as PyTorch).
  Shape out_shape = x.shape();
  if (x.dim() > 0) out_shape[d] = k;
  TopK<T> result{empty<T>(out_shape, x.device()), empty<std::int64_t>(out_shape, x.device())};
  if (result.values.numel() == 0) return result;
  const TensorView<const T> xc = x.contiguous();
  run_topk_rows(xc.data(), result.values.data(), result.indices.data(), rows, x.dim() > 0 ? k : 1, largest, sorted,
                x.device());
  return result;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// topk(x, k, dim, largest, sorted) = the k largest elements along `dim` (smallest when !largest)
/// and their indices along it (torch.topk). A NaN ranks as the largest value (first among the
/// largest, last among the smallest); of equal values the lower index is chosen and comes first.
/// sorted: in that order (largest first, or smallest first); otherwise in no particular order
/// (the chosen set is the same). k must lie in [0, size of dim], else weft::Error. Any real dtype;
/// an expression input is evaluated first.
template <Operand X>
  requires HasTensorOperand<X>
TopK<detail::operand_dtype_t<X>> topk(const X& x, std::int64_t k, std::int64_t dim = -1, bool largest = true,
                                      bool sorted = true) {
  return detail::topk_impl<detail::operand_dtype_t<X>>(detail::materialize(x), k, dim, largest, sorted);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft

// SPDX-License-Identifier: MIT
/// @file argmax and argmin: the int64 index of the largest / smallest element, over the flattened input or along one dim.
#pragma once

#include <cstdint>

#include "weft/backend/along_dim.hpp"
#include "weft/ops/along_dim.hpp"
#include "weft/ops/factories.hpp"

namespace weft {
namespace detail {
inline namespace WEFT_BACKEND_ABI {

/// argmax (kMax) / argmin of x along *dim, or of x flattened (row-major) when dim is null.
template <bool kMax, class T>
Tensor<std::int64_t> arg_reduce_impl(const char* op, const TensorView<const T>& x, const std::int64_t* dim,
                                     bool keepdim) {
  const int d = check_along_dim(op, x, dim);
  const Shape& shape = x.shape();
  DimRows rows{1, x.numel(), 1};
  Shape out_shape;
  if (dim) {
    rows = rows_along(shape, d);
    for (int k = 0; k < shape.rank(); ++k)
      if (k != d) out_shape.push_back(shape[k]);
      else if (keepdim) out_shape.push_back(1);
    if (rows.n == 0)
      fail(op, "cannot reduce over dim ", d, " of size 0 (input shape ", shape, "): ", op,
           " of an empty set is undefined; reduce over a non-empty dim");
  } else if (rows.n == 0) {
    fail(op, "the input of shape ", shape, " has no elements: ", op,
         " of an empty set is undefined; pass a non-empty tensor");
  }
  Tensor<std::int64_t> out = empty<std::int64_t>(out_shape, x.device());
  if (out.numel() == 0) return out;
  const TensorView<const T> xc = x.contiguous();
  run_arg_reduce_rows<kMax>(xc.data(), out.data(), rows, x.device());
  return out;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// argmax(x) = the index of the largest element of x flattened in row-major order, as a 0-dim
/// int64 tensor (torch.argmax). Of equal elements the first index wins; a NaN counts as the
/// largest (the first NaN's index). Any real dtype (bool too; 16-bit floats compare as float).
/// An expression input is evaluated first. No elements: weft::Error.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<std::int64_t> argmax(const X& x) {
  return detail::arg_reduce_impl<true, detail::operand_dtype_t<X>>("argmax", detail::materialize(x), nullptr, false);
}
/// argmax along `dim` (negative counts from the end): the index along dim of each row's largest
/// element; keepdim leaves dim as size 1. A dim of size 0: weft::Error.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<std::int64_t> argmax(const X& x, std::int64_t dim, bool keepdim = false) {
  return detail::arg_reduce_impl<true, detail::operand_dtype_t<X>>("argmax", detail::materialize(x), &dim, keepdim);
}

/// argmin(x) = the index of the smallest element of x flattened (row-major), a 0-dim int64
/// tensor; the first among equal elements; a NaN counts as the smallest too (as torch.argmin).
template <Operand X>
  requires HasTensorOperand<X>
Tensor<std::int64_t> argmin(const X& x) {
  return detail::arg_reduce_impl<false, detail::operand_dtype_t<X>>("argmin", detail::materialize(x), nullptr, false);
}
/// argmin along `dim`; keepdim leaves dim as size 1. A dim of size 0: weft::Error.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<std::int64_t> argmin(const X& x, std::int64_t dim, bool keepdim = false) {
  return detail::arg_reduce_impl<false, detail::operand_dtype_t<X>>("argmin", detail::materialize(x), &dim, keepdim);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft

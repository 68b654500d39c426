// SPDX-License-Identifier: MIT
/// @file Stream compaction: nonzero (the coordinates of the nonzero elements, torch.nonzero) and masked_select (the elements where a bool mask is true, torch.masked_select).
#pragma once

#include <cstdint>
#include <type_traits>

#include "weft/backend/select.hpp"
#include "weft/ops/along_dim.hpp"
#include "weft/ops/factories.hpp"

namespace weft {
namespace detail {
inline namespace WEFT_BACKEND_ABI {

template <class T>
Tensor<std::int64_t> nonzero_impl(const TensorView<const T>& x) {
  check_along_dim("nonzero", x, nullptr);
  const TensorView<const T> xc = x.contiguous();
  const std::int64_t nnz = run_count_nonzero(xc.data(), xc.numel(), x.device());
  Tensor<std::int64_t> out = empty<std::int64_t>(Shape{nnz, x.dim()}, x.device());
  if (nnz > 0) run_nonzero(xc.data(), x.shape(), nnz, out.data(), x.device());
  return out;
}

template <class T>
Tensor<T> masked_select_impl(const TensorView<const T>& x, const TensorView<const bool>& mask) {
  const char* op = "masked_select";
  check_along_dim(op, x, nullptr);
  if (!mask.defined()) fail(op, "the mask is an empty (default-constructed) tensor");
  if (mask.device() != x.device())
    fail(op, "the input (shape ", x.shape(), ") is on ", x.device(), " but the mask (shape ", mask.shape(), ") is on ",
         mask.device(), "; move them to one device with .to(device)");
  Shape shape;
  if (!broadcast_into(shape, x.shape()) || !broadcast_into(shape, mask.shape()))
    fail_broadcast(op, {x.shape(), mask.shape()}, "the input and the mask");
  const TensorView<const T> xc = x.expand(shape).contiguous();
  const TensorView<const bool> mc = mask.expand(shape).contiguous();
  const std::int64_t kept = run_count_nonzero(mc.data(), mc.numel(), x.device());
  Tensor<T> out = empty<T>(Shape{kept}, x.device());
  if (kept > 0) run_masked_select(xc.data(), mc.data(), mc.numel(), out.data(), x.device());
  return out;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// nonzero(x) = the coordinates of x's nonzero elements (NaN counts as nonzero; bool: the true
/// ones), one row each in row-major order: int64 of shape [count, x.dim()] (torch.nonzero). Any
/// dtype and strides; an expression input is evaluated first. The count decides the shape, so on
/// a GPU it is copied to the host first (the call waits for the GPU, as torch's does).
template <Operand X>
  requires HasTensorOperand<X>
Tensor<std::int64_t> nonzero(const X& x) {
  return detail::nonzero_impl<detail::operand_dtype_t<X>>(detail::materialize(x));
}

/// masked_select(x, mask) = the 1-D tensor of x's elements where mask is true, in row-major order
/// of x and mask broadcast together (numpy's rule, torch.masked_select). mask holds bool (a
/// compile-time error otherwise); either may be an expression (evaluated first). Shapes that do not
/// broadcast, or operands on two devices: weft::Error. On a GPU the count is copied to the host first.
template <Operand X, Operand M>
  requires HasTensorOperand<X> && HasTensorOperand<M>
Tensor<detail::operand_dtype_t<X>> masked_select(const X& x, const M& mask) {
  static_assert(std::is_same_v<detail::operand_dtype_t<M>, bool>,
                "weft::masked_select: the mask must hold bool; write a comparison (x > 0) or cast<bool>(mask)");
  if constexpr (std::is_same_v<detail::operand_dtype_t<M>, bool>)
    return detail::masked_select_impl<detail::operand_dtype_t<X>>(detail::materialize(x), detail::materialize(mask));
  else return {};  // not reached: the assertion above stops the build with its message alone
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft

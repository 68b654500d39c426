// SPDX-License-Identifier: MIT
/// @file cumsum: the running sums along one dim (int64 for bool and integers, as sum).
#pragma once

#include <cstdint>

#include "weft/backend/along_dim.hpp"
#include "weft/ops/along_dim.hpp"
#include "weft/ops/factories.hpp"
#include "weft/ops/reduce.hpp"

namespace weft {
namespace detail {
inline namespace WEFT_BACKEND_ABI {

template <class T>
Tensor<sum_dtype_t<T>> cumsum_impl(const TensorView<const T>& x, std::int64_t dim) {
  const int d = check_along_dim("cumsum", x, &dim);
  Tensor<sum_dtype_t<T>> y = empty<sum_dtype_t<T>>(x.shape(), x.device());
  if (y.numel() == 0) return y;
  const TensorView<const T> xc = x.contiguous();
  run_cumsum_rows(xc.data(), y.data(), rows_along(x.shape(), d), x.device());
  return y;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// cumsum(x, dim)_i = x_0 + x_1 + ... + x_i along `dim` (torch.cumsum), a new contiguous tensor of
/// x's shape. bool and integers sum in int64; floats keep their dtype, 16-bit floats keep the
/// running sum in float and round it at each output. Sequential along dim (each output carries
/// the error of a left-to-right sum), parallel over the other dims. An expression input is
/// evaluated first.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<detail::sum_dtype_t<detail::operand_dtype_t<X>>> cumsum(const X& x, std::int64_t dim) {
  return detail::cumsum_impl<detail::operand_dtype_t<X>>(detail::materialize(x), dim);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft

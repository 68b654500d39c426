// SPDX-License-Identifier: MIT
/// @file sort and argsort: a stable sort along one dim (torch.sort(stable=True) / torch.argsort), the sorted elements and their int64 indices.
#pragma once

#include <cstdint>

#include "weft/backend/sort.hpp"
#include "weft/ops/along_dim.hpp"
#include "weft/ops/factories.hpp"

namespace weft {

/// sort's result: the elements in order along the dim and where each came from, both shaped like
/// the input (`auto [values, indices] = weft::sort(x);`).
template <class T>
struct Sorted {
  Tensor<T> values;
  Tensor<std::int64_t> indices;
};

namespace detail {
inline namespace WEFT_BACKEND_ABI {

/// The indices of x's stable sort along dim, and the values (when want_values) gathered by them.
template <class T>
Sorted<T> sort_impl(const char* op, const TensorView<const T>& x, std::int64_t dim, bool descending,
                    bool want_values) {
  const int d = check_along_dim(op, x, &dim);
  Sorted<T> result;
  if (want_values) result.values = empty<T>(x.shape(), x.device());
  result.indices = empty<std::int64_t>(x.shape(), x.device());
  if (x.numel() == 0) return result;
  const TensorView<const T> xc = x.contiguous();
  run_sort_rows(xc.data(), want_values ? result.values.data() : nullptr, result.indices.data(),
                rows_along(x.shape(), d), descending, x.device());
  return result;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// sort(x, dim, descending) = x's elements along `dim` in ascending order (descending: the
/// reverse order of the keys) and their indices along it: values[..., j, ...] = x[..., indices[..., j,
/// ...], ...] (torch.sort with stable=True). Always stable: equal elements keep their order, in
/// both directions. NaN sorts last ascending and first descending (every NaN equal to the others);
/// -0.0 and 0.0 are equal. Every dtype, any strides; a 0-dim input gives its element and index 0.
/// An expression input is evaluated first. dim out of range: weft::Error.
template <Operand X>
  requires HasTensorOperand<X>
Sorted<detail::operand_dtype_t<X>> sort(const X& x, std::int64_t dim = -1, bool descending = false) {
  return detail::sort_impl<detail::operand_dtype_t<X>>("sort", detail::materialize(x), dim, descending, true);
}

/// argsort(x, dim, descending) = sort(x, dim, descending).indices, without writing the values.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<std::int64_t> argsort(const X& x, std::int64_t dim = -1, bool descending = false) {
  return detail::sort_impl<detail::operand_dtype_t<X>>("argsort", detail::materialize(x), dim, descending, false)
      .indices;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft

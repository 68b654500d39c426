// SPDX-License-Identifier: MIT
/// @file roll: the elements shifted cyclically along dims (torch.roll), each rolled dim two copied pieces.
#pragma once

#include <cstdint>
#include <vector>

#include "weft/ops/box_copy.hpp"
#include "weft/ops/materialize.hpp"

namespace weft {
namespace detail {
inline namespace WEFT_BACKEND_ABI {

/// The runs of roll: along a dim of extent n rolled by s (taken mod n, so negative and larger
/// shifts wrap), out[i] = x[(i - s) mod n]: out[0, s) = x[n - s, n) and out[s, n) = x[0, n - s).
inline DimRuns roll_runs(const char* op, const Shape& shape, const std::vector<std::int64_t>& shifts,
                         const std::vector<std::int64_t>& dims) {
  if (shifts.size() != dims.size())
    fail(op, "got ", shifts.size(), " shifts but ", dims.size(), " dims (input shape ", shape,
         "); give one shift per dim");
  const std::vector<int> wrapped = distinct_dims(op, dims, shape);
  DimRuns runs(static_cast<std::size_t>(shape.rank()));
  for (std::size_t i = 0; i < wrapped.size(); ++i) {
    const int d = wrapped[i];
    const std::int64_t n = shape.rank() > 0 ? shape[d] : 1;
    if (n == 0) continue;
    const std::int64_t s = (shifts[i] % n + n) % n;
    if (s != 0) runs[std::size_t(d)] = {{0, s, n - s, 1}, {s, n - s, 0, 1}};
  }
  return runs;
}

template <class T>
Tensor<T> roll_dims(const TensorView<const T>& x, const std::vector<std::int64_t>& shifts,
                    const std::vector<std::int64_t>& dims) {
  return boxes_tensor("roll", x.shape(), x, roll_runs("roll", x.shape(), shifts, dims), NoFill{});
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// roll(x, shifts, dims)[..., i, ...] = x[..., (i - shift) mod n, ...] along each dim of `dims`
/// by the shift at the same position (torch.roll): a new contiguous tensor. Each rolled dim is two
/// pieces, so k rolled dims copy 2^k boxes of x, one pointwise kernel each (CPU or CUDA), every
/// element written once. Shifts may be negative or exceed the extent (they wrap); negative dims
/// count from the end; a dim out of range or named twice, or shifts and dims of different lengths,
/// is a weft::Error. An expression input is evaluated first.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<detail::operand_dtype_t<X>> roll(const X& x, const std::vector<std::int64_t>& shifts,
                                        const std::vector<std::int64_t>& dims) {
  return detail::roll_dims(detail::materialize(x), shifts, dims);
}
/// roll(x, shift, dim): one dim.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<detail::operand_dtype_t<X>> roll(const X& x, std::int64_t shift, std::int64_t dim) {
  return detail::roll_dims(detail::materialize(x), {shift}, {dim});
}
/// roll(x, shift) without dims: x flattened (row-major), rolled, and given x's shape back
/// (torch.roll with no dims). A non-contiguous x is copied first.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<detail::operand_dtype_t<X>> roll(const X& x, std::int64_t shift) {
  const auto v = detail::materialize(x);
  const auto flat = v.contiguous().view(Shape{v.numel()});
  const Tensor<detail::operand_dtype_t<X>> out = detail::roll_dims(flat, {shift}, {0});
  return Tensor<detail::operand_dtype_t<X>>(detail::AdoptStorage{}, out.storage(), v.shape());  // no copy
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft

// SPDX-License-Identifier: MIT
/// @file flip: the elements in reverse order along the given dims (torch.flip), one copy through a reversed view.
#pragma once

#include <cstdint>

#include "weft/ops/box_copy.hpp"
#include "weft/ops/materialize.hpp"
#include "weft/ops/reduce.hpp"

namespace weft {
namespace detail {
inline namespace WEFT_BACKEND_ABI {

/// The runs of flip: out[..., i, ...] = x[..., n - 1 - i, ...] along each flipped dim of extent n.
inline DimRuns flip_runs(const char* op, const Shape& shape, const std::vector<std::int64_t>& dims) {
  DimRuns runs(static_cast<std::size_t>(shape.rank()));
  for (int d : distinct_dims(op, dims, shape))
    if (shape.rank() > 0) runs[std::size_t(d)] = {{0, shape[d], shape[d] - 1, -1}};
  return runs;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// flip(x, dims)[..., i, ...] = x[..., n - 1 - i, ...] along every dim in `dims` (torch.flip):
/// a new contiguous tensor, written by ONE pointwise kernel (CPU or CUDA) that reads x through a
/// view with negative strides along the flipped dims. Negative dims count from the end; a dim out
/// of range or named twice is a weft::Error. An expression input is evaluated first.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<detail::operand_dtype_t<X>> flip(const X& x, const DimList& dims) {
  const auto v = detail::materialize(x);
  return detail::boxes_tensor("flip", v.shape(), v, detail::flip_runs("flip", v.shape(), dims.dims()),
                              detail::NoFill{});
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft

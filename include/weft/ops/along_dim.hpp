// SPDX-License-Identifier: MIT
/// @file What the ops along one dim (argmax / argmin, topk, cumsum, softmax / log_softmax) check first: the input defined, the dim in range, a device this translation unit runs.
#pragma once

#include <cstdint>

#include "weft/ops/materialize.hpp"

namespace weft::detail {
inline namespace WEFT_BACKEND_ABI {  // a g++ translation unit refuses CUDA tensors, an nvcc one runs them

/// Checks x for `op` before anything is allocated; returns *dim wrapped into [0, rank) (-1 without a dim).
template <class T>
int check_along_dim(const char* op, const TensorView<const T>& x, const std::int64_t* dim) {
  if (!x.defined()) fail(op, "the input is an empty (default-constructed) tensor");
  const int d = dim ? wrap_dim_of(op, *dim, x.shape()) : -1;
  check_device_compiled(op, x.device());
  return d;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail

// SPDX-License-Identifier: MIT
/// @file What the benches that link libtorch (bench/sdpa_torch, bench/matmul_torch) share: torch tensors copied into weft tensors.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <cstring>

#include <weft/weft.hpp>

namespace weft_bench {

/// A weft tensor holding a copy of a contiguous torch tensor's elements (same dtype, same shape).
template <class T>
weft::Tensor<T> to_weft(const torch::Tensor& t) {
  weft::Shape shape;
  for (std::int64_t d : t.sizes()) shape.push_back(d);
  weft::Tensor<T> w = weft::empty<T>(shape);
  std::memcpy(w.data(), t.contiguous().data_ptr(), std::size_t(t.numel()) * sizeof(T));
  return w;
}

}  // namespace weft_bench

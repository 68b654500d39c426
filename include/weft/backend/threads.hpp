// SPDX-License-Identifier: MIT
/// @file set_num_threads / get_num_threads: how many threads weft's CPU kernels use.
#pragma once

#include <atomic>

#include "weft/backend/cpu/pointwise.hpp"
#include "weft/core/error.hpp"

namespace weft {
inline namespace WEFT_BACKEND_ABI {

/// From now on every CPU kernel (pointwise, foreach, reductions, softmax, layer_norm, attention,
/// matmul's GEMMs) uses up to n threads, whichever thread launches it
/// (torch.set_num_threads). A kernel still runs small inputs on fewer threads. n >= 1; before any
/// call, OpenMP's count applies (OMP_NUM_THREADS, or one per hardware thread).
inline void set_num_threads(int n) {
  if (n < 1) detail::fail("set_num_threads", "needs n >= 1, got ", n);
#if !defined(__CUDA_ARCH__)
  detail::cpu::thread_limit.store(n, std::memory_order_relaxed);
#endif
}

/// The threads a large CPU kernel uses now (torch.get_num_threads).
inline int get_num_threads() {
#if !defined(__CUDA_ARCH__)
  return detail::cpu::max_threads();
#else
  return 1;
#endif
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft

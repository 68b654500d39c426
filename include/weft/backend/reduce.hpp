// SPDX-License-Identifier: MIT
/// @file Reductions (over dims of an expression, and the per-tensor norms of a list) handed to the executor of the data's device: one call each, as backend/run.hpp does for pointwise statements, so that ops/ names no backend.
#pragma once

#include <vector>

#include "weft/backend/cpu/reduce/foreach_norm.hpp"
#include "weft/backend/cpu/reduce/reduce.hpp"
#include "weft/core/device.hpp"
#include "weft/core/storage.hpp"
#include "weft/core/tensor_list.hpp"
#include "weft/plan/reduction.hpp"

#if defined(__CUDACC__)
#include "weft/backend/cuda/reduce.cuh"
#endif

namespace weft::detail {
inline namespace WEFT_BACKEND_ABI {

/// out[o] = O(red.finalize(red over the inputs of output o)) for every output o of the planned
/// reduction of `expr`, into the contiguous `out` on `device`. `strides`: every operand's,
/// broadcast to plan.full. `single_thread`: on the calling thread only (a CPU row block of a row
/// epilogue, backend/row_epilogue.hpp, which runs blocks in parallel).
template <class O, class Red, class E>
void run_reduce(const Red& red, const E& expr, const ReducePlan& plan, const std::vector<Strides>& strides, O* out,
                Device device, bool single_thread) {
  if (device.is_cpu()) {
#if !defined(__CUDA_ARCH__)
    cpu::run_reduce<O>(red, expr, plan, strides, out, single_thread);
#endif
  } else {
#if defined(__CUDACC__)
    cuda::run_reduce<O>(red, expr, plan, strides, out, device);
#else
    (void)single_thread;
    fail_no_cuda("reduction");
#endif
  }
}

/// The partial of `order` over each tensor of `list` (a sum of |x|^p or a max of |x|; finish
/// turns it into the norm), in ONE pass over all elements. CPU tensors only, contiguous.
template <class T>
std::vector<double> foreach_norm_partials(const TensorList<T>& list, const ForeachNormOrder& order, const char* op) {
  for (std::size_t k = 0; k < list.size(); ++k) {
    const auto& t = list[k];
    if (!t.defined()) fail(op, "tensor ", k, " of the list is empty (default-constructed)");
    if (!t.device().is_cpu())
      fail(op, "tensor ", k, " is on ", t.device(), "; list norms run on the CPU only: move the list with .to(Device::cpu())");
    if (!t.is_contiguous())
      fail(op, "tensor ", k, " of shape ", t.shape(), " has strides ", t.strides(), "; call .contiguous() first");
  }
#if !defined(__CUDA_ARCH__)
  return cpu::foreach_norm_partials(list, order);
#else
  return {};
#endif
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail

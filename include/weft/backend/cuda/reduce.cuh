// SPDX-License-Identifier: MIT
/// @file The CUDA reduction executor: CUB device (segmented) reductions over a transform iterator that evaluates the expression at each logical index (nvcc only).
#pragma once

#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>

#include <algorithm>
#include <cstdint>

#include "weft/backend/cuda/runtime.cuh"
#include "weft/core/device.hpp"
#include "weft/dense/reduce_plan.hpp"
#include "weft/dense/reducers.hpp"
#include "weft/plan/kernel.hpp"

namespace weft::detail::cuda {

/// Element i of the logical sequence (output o = i / n_red, reduced index
/// r = i % n_red; kept dims outer, reduced dims inner) after the reducer's
/// transform: the expression is evaluated right here, never materialized.
template <class Red, class Ev, class Shared>
struct ReduceElement {
  using Acc = typename Red::acc_type;
  Red red;
  Ev ev;
  int nk = 0, nr = 0;
  std::int64_t n_red = 1;
  std::int64_t kept[kMaxRank] = {};
  std::int64_t reduced[kMaxRank] = {};

  __host__ __device__ Acc operator()(std::int64_t i) const {
    std::int64_t o = i / n_red, r = i - o * n_red;
    std::int64_t outer[kMaxRank] = {};
    const std::int64_t inner = reduced[nr - 1];
    const std::int64_t j = r % inner;
    unravel(r / inner, reduced, nr - 1, outer + nk);
    unravel(o, kept, nk, outer);
    Ev e = ev;
    e.seek(outer);
    typename scalar_cache<Shared>::type cache{};
    return red.transform(e.coeff(j, cache));
  }
};

template <class Red>
struct ReduceCombine {
  using Acc = typename Red::acc_type;
  Red red;
  __host__ __device__ Acc operator()(const Acc& a, const Acc& b) const { return red.combine(a, b); }
};

/// out = O(finalize(total)) as CUB writes each total.
template <class O, class Red>
struct ReduceFinish {
  using Acc = typename Red::acc_type;
  Red red;
  std::int64_t n_red;
  __host__ __device__ O operator()(Acc total) const { return O(red.finalize(total, n_red)); }
};

/// Start of segment s in the logical sequence: s * n_red.
struct SegmentStart {
  std::int64_t n_red;
  __host__ __device__ std::int64_t operator()(std::int64_t s) const { return s * n_red; }
};

/// Stream-ordered scratch memory for CUB (the driver's pool caches it).
class ScratchBuffer {
 public:
  ScratchBuffer(std::size_t bytes, cudaStream_t stream) : stream_(stream) {
    if (bytes) check_cuda(cudaMallocAsync(&p_, bytes, stream_), "cudaMallocAsync (reduction scratch)");
  }
  ~ScratchBuffer() {
    if (p_) cudaFreeAsync(p_, stream_);
  }
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
  cudaStream_t stream_;
};

/// Outputs fewer than this with at least kLongSegment inputs each run as one
/// device-wide reduction per output (all SMs on each); otherwise one
/// segmented reduction runs a block per output.
inline constexpr std::int64_t kFewOutputs = 16;
inline constexpr std::int64_t kLongSegment = std::int64_t(1) << 16;

/// Runs `red` over the planned reduction of `expr` into the contiguous device array `out` (n_out values).
template <class O, class Red, class E>
void run_reduce(const Red& red, const E& expr, const ReducePlan& plan, O* out, Device device) {
  using Shared = shared_nodes_t<E>;
  using Acc = typename Red::acc_type;
  using Ev = Evaluator<E, Acc, false, Shared>;
  CudaDeviceGuard guard(device.index());
  const cudaStream_t stream = 0;

  IterationSpace space = plan.inner_space();
  BuildContext<Shared> build;
  build.space = &space;
  ReduceElement<Red, Ev, Shared> element{red, Ev(expr, build)};
  element.nk = plan.nk();
  element.nr = plan.nr();
  element.n_red = plan.n_red;
  for (int d = 0; d < plan.nk(); ++d) element.kept[d] = plan.kept[d].extent;
  for (int d = 0; d < plan.nr(); ++d) element.reduced[d] = plan.reduced[d].extent;

  auto in = thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0), element);
  auto sink = thrust::make_transform_output_iterator(out, ReduceFinish<O, Red>{red, plan.n_red});
  const ReduceCombine<Red> combine{red};
  const Acc init = red.identity();
  std::size_t bytes = 0;

  if (plan.n_out == 1 || (plan.n_out <= kFewOutputs && plan.n_red >= kLongSegment)) {
    check_cuda(cub::DeviceReduce::Reduce(nullptr, bytes, in, sink, plan.n_red, combine, init, stream),
               "cub::DeviceReduce::Reduce (size query)");
    ScratchBuffer scratch(bytes, stream);
    for (std::int64_t o = 0; o < plan.n_out; ++o) {
      std::size_t run_bytes = bytes;
      check_cuda(cub::DeviceReduce::Reduce(scratch.get(), run_bytes, in + o * plan.n_red, sink + o, plan.n_red,
                                           combine, init, stream),
                 "cub::DeviceReduce::Reduce");
    }
  } else {
    auto starts = thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0), SegmentStart{plan.n_red});
    check_cuda(cub::DeviceSegmentedReduce::Reduce(nullptr, bytes, in, sink, plan.n_out, starts, starts + 1, combine,
                                                  init, stream),
               "cub::DeviceSegmentedReduce::Reduce (size query)");
    ScratchBuffer scratch(bytes, stream);
    check_cuda(cub::DeviceSegmentedReduce::Reduce(scratch.get(), bytes, in, sink, plan.n_out, starts, starts + 1,
                                                  combine, init, stream),
               "cub::DeviceSegmentedReduce::Reduce");
  }
  check_cuda(cudaGetLastError(), "reduction kernel launch");
}

// ---- row reductions for the row kernels (softmax, layer_norm) ----------------

/// Threads per block of the row kernels.
inline constexpr int kRowBlock = 256;
/// Rows of at most this many elements get one warp each; longer rows a block.
inline constexpr std::int64_t kWarpRowLimit = 1024;

/// a + b
struct AddOp {
  template <class T>
  __device__ T operator()(const T& a, const T& b) const {
    return a + b;
  }
};
/// max(a, b), NaN if either is NaN
struct NanMaxOp {
  template <class T>
  __device__ T operator()(const T& a, const T& b) const {
    return math::max(a, b);
  }
};

/// Shared memory of RowReduce: CUB's scratch plus a broadcast slot per group.
template <class Acc, int G>
struct RowReduceStorage {
  static constexpr int kGroups = kRowBlock / G;
  using WarpReduce = cub::WarpReduce<Acc>;
  using BlockReduce = cub::BlockReduce<Acc, kRowBlock>;
  union {
    typename WarpReduce::TempStorage warp[kGroups];
    typename BlockReduce::TempStorage block;
  } cub;
  Acc result[kGroups];
};

/// Reduces `v` across the G threads of a row group (G = 32: one warp per
/// row; G = kRowBlock: the whole block) and returns the total in every
/// thread of the group. Every thread of a group must call it, the same
/// number of times; with G = kRowBlock it contains __syncthreads().
template <int G, class Acc, class Op>
__device__ Acc row_allreduce(Acc v, Op op, RowReduceStorage<Acc, G>& storage) {
  if constexpr (G == 32) {
    const int group = threadIdx.x / 32;
    Acc total = typename RowReduceStorage<Acc, G>::WarpReduce(storage.cub.warp[group]).Reduce(v, op);
    __syncwarp();  // the warp's scratch may be reused right after
    return __shfl_sync(0xffffffffu, total, 0);  // lane 0 holds the total
  } else {
    static_assert(G == kRowBlock, "a row group is a warp or the whole block");
    Acc total = typename RowReduceStorage<Acc, G>::BlockReduce(storage.cub.block).Reduce(v, op);
    if (threadIdx.x == 0) storage.result[0] = total;  // thread 0 holds the total
    __syncthreads();
    total = storage.result[0];
    __syncthreads();  // everyone has read it, and the scratch is free again
    return total;
  }
}

/// Blocks for `groups` independent rows, G threads per row: grid-stride
/// loops cover any excess.
inline unsigned row_grid(std::int64_t rows, int G) {
  const std::int64_t per_block = kRowBlock / G;
  const std::int64_t blocks = (rows + per_block - 1) / per_block;
  return unsigned(std::min<std::int64_t>(blocks, std::int64_t(1) << 20));
}

}  // namespace weft::detail::cuda

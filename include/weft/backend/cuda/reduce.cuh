// SPDX-License-Identifier: MIT
/// @file The CUDA reduction executor: a warp, a block or a thread per output (or per chunk of a long output, then a combine pass), evaluating the expression inside the loop (nvcc only).
#pragma once

#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>
#include <cub/util_ptx.cuh>
#include <cub/warp/warp_reduce.cuh>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "weft/backend/cuda/runtime.cuh"
#include "weft/core/device.hpp"
#include "weft/plan/reduction.hpp"
#include "weft/expr/reducers.hpp"
#include "weft/expr/math.hpp"
#include "weft/plan/kernel.hpp"

namespace weft::detail::cuda {

// ---- row reductions for the row kernels (softmax, layer_norm) ----------------

/// Threads per block of the row kernels.
inline constexpr int kRowBlock = 256;
inline constexpr int kRowBlockLog2 = 8;
static_assert(kRowBlock == 1 << kRowBlockLog2);
inline constexpr int kWarpLog2 = 5;  // 32 threads
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

/// Where this thread works in a row kernel whose groups of G threads each take a row
/// (kRowBlock / G groups a block): its lane in the group, its group's first row, and the step
/// between the rows its group takes (a grid-stride loop over rows).
template <int G>
struct RowGroup {
  int lane;
  std::int64_t first, step;
  __device__ RowGroup()
      : lane(int(threadIdx.x) % G),
        first(std::int64_t(blockIdx.x) * (kRowBlock / G) + int(threadIdx.x) / G),
        step(std::int64_t(gridDim.x) * (kRowBlock / G)) {}
};

/// Shared memory of row_allreduce: CUB's scratch plus a broadcast slot per group.
template <class Acc, int G>
struct RowReduceStorage {
  static constexpr int kGroups = kRowBlock / G;
  using WarpReduce = cub::WarpReduce<Acc>;
  using BlockReduce = cub::BlockReduce<Acc, kRowBlock>;
  union {
    typename WarpReduce::TempStorage warp[kGroups];
    typename BlockReduce::TempStorage block;
  } scratch;
  Acc result[kGroups];
};

/// Reduces `v` across the G threads of a row group (G = 32: one warp per
/// row; G = kRowBlock: the whole block) and returns the total in every
/// thread of the group. Every thread of a group must call it, the same
/// number of times; with G = kRowBlock it contains __syncthreads(). The
/// storage may be laid out for smaller groups (more of them) than G.
template <int G, class Acc, class Op, int StorageG>
__device__ Acc row_allreduce(Acc v, Op op, RowReduceStorage<Acc, StorageG>& storage) {
  static_assert(StorageG <= G, "the storage needs a slot for every group");
  if constexpr (G == 32) {
    const int group = threadIdx.x / 32;
    Acc total = typename RowReduceStorage<Acc, StorageG>::WarpReduce(storage.scratch.warp[group]).Reduce(v, op);
    __syncwarp();  // the warp's scratch may be reused right after
    return cub::ShuffleIndex<32>(total, 0, 0xffffffffu);  // lane 0 holds the total (any type: word by word)
  } else {
    static_assert(G == kRowBlock, "a row group is a warp or the whole block");
    Acc total = typename RowReduceStorage<Acc, StorageG>::BlockReduce(storage.scratch.block).Reduce(v, op);
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

// ---- reductions of expressions ------------------------------------------------

/// Stream-ordered scratch memory (cudaMallocAsync: the driver's pool caches
/// it, so a reduction does not pay for a cudaMalloc each time).
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

/// Everything a reduction kernel needs: the reducer, the expression's
/// evaluator over the inner layout (kept dims outer, reduced dims inner), the
/// extents, and how each output's reduced range is cut into chunks.
template <class Red, class Ev>
struct ReduceArgs {
  ReduceArgs(const Red& r, const Ev& e) : red(r), ev(e) {}
  Red red;
  Ev ev;
  int nk = 0, nr = 0;
  std::int64_t kept[kMaxRank] = {};
  std::int64_t reduced[kMaxRank] = {};
  std::int64_t n_out = 1, n_red = 1;
  std::int64_t chunks = 1, chunk_len = 1;  // reduced range of output o, chunk c: [c * chunk_len, (c + 1) * chunk_len)
};

/// combine as a CUB operator.
template <class Red>
struct ReduceCombine {
  Red red;
  template <class Acc>
  __device__ Acc operator()(const Acc& a, const Acc& b) const {
    return red.combine(a, b);
  }
};

/// One segment (output o, chunk c) per group of G = 2^group_log2 threads (1, 32 or kRowBlock),
/// grid-stride. The threads of a group take every G-th element of the chunk (neighbouring lanes
/// read neighbouring elements of the innermost reduced dim); G == 1 gives each thread a whole
/// output, so neighbouring threads read neighbouring outputs (column reductions). With one chunk
/// the group writes out[o] = finalize(total); otherwise partial[segment] = total.
/// G is a run-time argument, uniform over the grid: one kernel per (reducer, expression) instead
/// of one per group size, which takes more than half of the reductions' device code (and its
/// compile time) away; the group loop is the same for every G, only the final combine differs.
template <class O, class Red, class Ev, class Shared>
__global__ void __launch_bounds__(kRowBlock)
    reduce_kernel(const ReduceArgs<Red, Ev> args, const int group_log2, O* __restrict__ out,
                  typename Red::acc_type* __restrict__ partial) {
  using Acc = typename Red::acc_type;
  __shared__ RowReduceStorage<Acc, 32> storage;  // a warp's slots for G = 32, the block's for G = kRowBlock
  const int group_size = 1 << group_log2;
  const int lane = int(threadIdx.x) & (group_size - 1);
  const std::int64_t groups_per_block = kRowBlock >> group_log2;
  const std::int64_t first = std::int64_t(blockIdx.x) * groups_per_block + (int(threadIdx.x) >> group_log2);
  const std::int64_t step = std::int64_t(gridDim.x) * groups_per_block;
  const std::int64_t segments = args.n_out * args.chunks;
  const std::int64_t inner = args.reduced[args.nr - 1];
  // Every thread of a group sees the same segments: row_allreduce's rule.
  for (std::int64_t seg = first; seg < segments; seg += step) {
    const std::int64_t o = seg / args.chunks, c = seg - o * args.chunks;
    const std::int64_t r0 = c * args.chunk_len;
    const std::int64_t r1 = r0 + args.chunk_len < args.n_red ? r0 + args.chunk_len : args.n_red;
    Ev ev = args.ev;
    std::int64_t outer[kMaxRank] = {};
    unravel(o, args.kept, args.nk, outer);
    if (args.nr == 1) ev.seek(outer);  // one reduced dim: a single row per output
    Acc acc = args.red.identity();
    for (std::int64_t r = r0 + lane; r < r1; r += group_size) {
      if (args.nr > 1) {
        unravel(r / inner, args.reduced, args.nr - 1, outer + args.nk);
        ev.seek(outer);
      }
      typename scalar_cache<Shared>::type cache{};
      acc = args.red.combine(acc, args.red.transform(ev.coeff(r % inner, cache)));
    }
    if (group_size == 32) acc = row_allreduce<32>(acc, ReduceCombine<Red>{args.red}, storage);
    else if (group_size == kRowBlock) acc = row_allreduce<kRowBlock>(acc, ReduceCombine<Red>{args.red}, storage);
    if (lane == 0) {
      if (args.chunks == 1) out[o] = O(args.red.finalize(acc, args.n_red));
      else partial[seg] = acc;
    }
  }
}

/// out[o] = finalize(combine of partial[o * chunks .. o * chunks + chunks)), a warp per output.
template <class O, class Red>
__global__ void __launch_bounds__(kRowBlock)
    reduce_partials_kernel(const Red red, const typename Red::acc_type* __restrict__ partial, O* __restrict__ out,
                           std::int64_t n_out, std::int64_t chunks, std::int64_t n_red) {
  using Acc = typename Red::acc_type;
  __shared__ RowReduceStorage<Acc, 32> storage;
  constexpr int kGroups = kRowBlock / 32;
  const int lane = int(threadIdx.x) % 32;
  const std::int64_t step = std::int64_t(gridDim.x) * kGroups;
  for (std::int64_t o = std::int64_t(blockIdx.x) * kGroups + int(threadIdx.x) / 32; o < n_out; o += step) {
    Acc acc = red.identity();
    for (std::int64_t c = lane; c < chunks; c += 32) acc = red.combine(acc, partial[o * chunks + c]);
    acc = row_allreduce<32>(acc, ReduceCombine<Red>{red}, storage);
    if (lane == 0) out[o] = O(red.finalize(acc, n_red));
  }
}

/// Outputs at least this many, each short or read across a column, get one thread each.
inline constexpr std::int64_t kThreadPerOutputMin = 4096;
/// Reduced ranges up to this long get a warp per output; longer ones a block per chunk.
inline constexpr std::int64_t kWarpSegmentMax = 4096;
/// Elements per block below which a long reduced range is not split further.
inline constexpr std::int64_t kMinChunk = 8192;

/// How a reduction runs on the GPU: the group of threads per segment (2^group_log2: a thread, a
/// warp or a block) and the chunks each output's reduced range is cut into (chunks > 1: a partials
/// pass combines them). Not a template: decided once per translation unit's code, whatever the
/// expression; only the launch below is compiled per kernel type.
struct ReduceLaunch {
  int group_log2 = 0;
  std::int64_t chunks = 1, chunk_len = 1;
};

/// A column reduction (the innermost reduced dim strided, the innermost kept dim unit-stride) or
/// many tiny ones: a thread per output. Short ranges: a warp per output. Long ranges: a block per
/// chunk, enough chunks to fill the GPU.
inline ReduceLaunch plan_reduce_launch(const ReducePlan& plan, const std::vector<Strides>& strides, Device device) {
  ReduceLaunch launch;
  launch.chunk_len = plan.n_red;
  const bool column = plan.nk() > 0 && !unit_stride_group(plan.reduced.back(), strides) &&
                      unit_stride_group(plan.kept.back(), strides);
  if (plan.n_out >= kThreadPerOutputMin && (column || plan.n_red <= 32)) {
    launch.group_log2 = 0;
  } else if (plan.n_red <= kWarpSegmentMax) {
    launch.group_log2 = kWarpLog2;
  } else {
    launch.group_log2 = kRowBlockLog2;
    const std::int64_t target = 4 * std::int64_t(device_properties(device.index()).multiProcessorCount);
    const std::int64_t most = (plan.n_red + kMinChunk - 1) / kMinChunk;
    launch.chunks = std::clamp<std::int64_t>((target + plan.n_out - 1) / plan.n_out, 1, most);
    launch.chunk_len = (plan.n_red + launch.chunks - 1) / launch.chunks;
    launch.chunks = (plan.n_red + launch.chunk_len - 1) / launch.chunk_len;  // no empty chunks
  }
  return launch;
}

/// Runs `red` over the planned reduction of `expr` into the contiguous device
/// array `out` (n_out values). `strides`: every operand's, broadcast to plan.full.
template <class O, class Red, class E>
void run_reduce(const Red& red, const E& expr, const ReducePlan& plan, const std::vector<Strides>& strides, O* out,
                Device device) {
  using Shared = shared_nodes_t<E>;
  using Acc = typename Red::acc_type;
  using Ev = Evaluator<E, Acc, false, Shared>;
  CudaDeviceGuard guard(device.index());
  const ReduceLaunch launch = plan_reduce_launch(plan, strides, device);

  IterationSpace space = plan.inner_space();
  BuildContext<Shared> build;
  build.space = &space;
  ReduceArgs<Red, Ev> args(red, Ev(expr, build));
  args.nk = plan.nk();
  args.nr = plan.nr();
  for (int d = 0; d < plan.nk(); ++d) args.kept[d] = plan.kept[d].extent;
  for (int d = 0; d < plan.nr(); ++d) args.reduced[d] = plan.reduced[d].extent;
  args.n_out = plan.n_out;
  args.n_red = plan.n_red;
  args.chunks = launch.chunks;
  args.chunk_len = launch.chunk_len;

  const std::int64_t segments = args.n_out * args.chunks;
  ScratchBuffer scratch(args.chunks > 1 ? std::size_t(segments) * sizeof(Acc) : 0, 0);
  Acc* partial = static_cast<Acc*>(scratch.get());
  reduce_kernel<O, Red, Ev, Shared>
      <<<row_grid(segments, 1 << launch.group_log2), kRowBlock>>>(args, launch.group_log2, out, partial);
  if (args.chunks > 1) {
    check_cuda(cudaGetLastError(), "reduction kernel launch");
    reduce_partials_kernel<O, Red><<<row_grid(args.n_out, 32), kRowBlock>>>(red, partial, out, args.n_out,
                                                                            args.chunks, args.n_red);
  }
  check_cuda(cudaGetLastError(), "reduction kernel launch");
}

}  // namespace weft::detail::cuda

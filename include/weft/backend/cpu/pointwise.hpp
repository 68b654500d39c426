// SPDX-License-Identifier: MIT
/// @file The CPU executor for pointwise kernels: rows of SIMD packets plus a scalar tail, split across OpenMP threads.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "weft/backend/cpu/simd/packet.hpp"
#include "weft/backend/cpu/simd/vec.hpp"
#include "weft/plan/iteration.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu {

/// Below this many elements a kernel runs on the calling thread: a fork/join
/// costs more than the work.
inline constexpr std::int64_t kMinElementsPerThread = 16384;

/// The thread count weft::set_num_threads chose for every CPU kernel, in every calling thread
/// (0: none chosen, OpenMP's default applies). A process-wide setting, as torch.set_num_threads,
/// where omp_set_num_threads would set only the calling thread's count.
inline std::atomic<int> thread_limit{0};

/// Threads a CPU kernel may use: set_num_threads's count, else OpenMP's (OMP_NUM_THREADS, or one
/// per hardware thread).
inline int max_threads() {
#if defined(_OPENMP)
  const int limit = thread_limit.load(std::memory_order_relaxed);
  return limit > 0 ? limit : omp_get_max_threads();
#else
  return 1;
#endif
}

/// Threads a kernel of n elements uses.
inline int threads_for(std::int64_t n) {
  return int(std::clamp<std::int64_t>(n / kMinElementsPerThread, 1, max_threads()));
}

/// Packet length a kernel uses: the native vector over its widest lane.
template <class Kernel>
inline constexpr int lanes_v = std::max<int>(1, simd::kBytes / int(KernelPackets<Kernel>::lane_bytes));

/// The tail of a row, [j, stop) with fewer than L elements left: a packet of L/2 lanes and one of
/// L/4 where they fit (at least 2 lanes each), the rest (under L/4) scalar. A row of 100 floats
/// on AVX-512 is then six 16-lane packets and one of 4, not six packets and four scalar calls:
/// the scalar path of a transcendental (std::tanh) costs ~20x a lane of its packet form, and
/// lists of small tensors are mostly tails (10,000 x 100 floats through x * 0.5 + tanh(x), one
/// thread: 1.15 -> 0.72 ms). Two widths, not every power of two down to 2: each is one more
/// instantiation of every kernel's packet path (compile time).
template <int L, class Target, class Kernel>
inline void run_tail(Kernel& kernel, std::int64_t& j, std::int64_t stop, bool stream) {
  if constexpr (L / 2 >= 2) {
    if (j + L / 2 <= stop) kernel.template run_vector<Target, L / 2>(j, stream), j += L / 2;
  }
  if constexpr (L / 4 >= 2) {
    if (j + L / 4 <= stop) kernel.template run_vector<Target, L / 4>(j, stream), j += L / 4;
  }
}

/// Elements [j, stop) of the kernel's current row: packets of L lanes, the tail's packets, the
/// rest (under L/4) one element at a time through the packet arithmetic (SingleLaneTarget), or
/// scalar where the kernel has no packet form. Target: PacketTarget, or ContiguousRowTarget where
/// every operand's row is contiguous.
template <class Target = PacketTarget, class Kernel>
inline void run_row(Kernel& kernel, std::int64_t j, std::int64_t stop, bool stream) {
  constexpr int L = lanes_v<Kernel>;
  if constexpr (KernelPackets<Kernel>::capable) {
    for (; j + L <= stop; j += L) kernel.template run_vector<Target, L>(j, stream);
    run_tail<L, Target>(kernel, j, stop, stream);
    constexpr int W = std::max<int>(2, 16 / int(KernelPackets<Kernel>::lane_bytes));  // one 16-byte register
    for (; j < stop; ++j) kernel.template run_vector<SingleLaneTarget<Target>, W>(j, false);
  } else {
    for (; j < stop; ++j) kernel.run_scalar(j);
  }
}

/// Runs elements [begin, end) of the iteration space, row by row.
template <class Kernel>
void run_range(Kernel& kernel, const IterationSpace& space, std::int64_t begin, std::int64_t end, bool stream) {
  const std::int64_t inner = space.inner();
  std::int64_t outer[kMaxRank] = {};
  std::int64_t row = begin / inner, j = begin % inner;
  row_coordinates(space, row, outer);
  for (std::int64_t i = begin; i < end; ++row, j = 0) {
    kernel.seek(outer);
    std::int64_t stop = std::min(inner, j + (end - i));
    i += stop - j;
    run_row(kernel, j, stop, stream);
    for (int d = space.rank() - 2; d >= 0 && ++outer[d] == space.shape[d]; --d) outer[d] = 0;
  }
  if (stream) simd::stream_fence();
}

/// Runs the whole kernel; chunk boundaries are multiples of the packet
/// length, so aligned destinations stay aligned in every thread (needed by
/// the non-temporal stores).
template <class Kernel>
void run_pointwise(const Kernel& kernel, const IterationSpace& space, int threads, bool stream) {
  constexpr int L = lanes_v<Kernel>;
  const std::int64_t n = space.numel;
  if (n == 0) return;
  if (threads <= 1) {
    Kernel local = kernel;
    run_range(local, space, 0, n, stream);
    return;
  }
  const std::int64_t chunk = ((n + threads - 1) / threads + L - 1) / L * L;
  WEFT_PRAGMA_OMP(omp parallel num_threads(threads))
  {
#if defined(_OPENMP)
    const std::int64_t t = omp_get_thread_num();
#else
    const std::int64_t t = 0;
#endif
    const std::int64_t begin = std::min(n, t * chunk), end = std::min(n, begin + chunk);
    Kernel local = kernel;
    if (begin < end) run_range(local, space, begin, end, stream);
  }
}

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)

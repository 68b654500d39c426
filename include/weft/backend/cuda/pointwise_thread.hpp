// SPDX-License-Identifier: MIT
/// @file What one thread of a CUDA pointwise kernel runs (run_thread), and the launch constants it
/// depends on. Plain C++ (host-device): pointwise.cuh's __global__ template calls it on the GPU, and
/// tests run it on the host, thread by thread, with any C++ compiler.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "weft/backend/cuda/lanes.hpp"
#include "weft/core/config.hpp"
#include "weft/plan/iteration.hpp"
#include "weft/plan/kernel.hpp"

namespace weft::detail::cuda {

/// Threads per block. A memory-bound pointwise kernel needs enough loads in
/// flight per SM, not large blocks; 256 lets 8 blocks share an SM (2048
/// threads) and keeps the grid-stride tail short.
inline constexpr int kBlockThreads = 256;

/// Bytes a thread moves per access of the widest operand: one 128-bit
/// ld/st.global.v4 instruction, the widest the hardware has.
inline constexpr std::size_t kVectorBytes = 16;

/// The classic kernel-parameter limit. CUDA >= 12.1 raises it to 32764 bytes
/// on Volta and newer, but every argument byte is copied at each launch, and
/// long tensor lists belong to the foreach path anyway.
inline constexpr std::size_t kKernelArgBytes = 4096;

template <class Kernel>
struct pointwise_layout;
template <bool kLinear, class... Stmts>
struct pointwise_layout<PointwiseKernel<kLinear, Stmts...>> {
  static constexpr bool linear = kLinear;
};

/// Elements per vector access: 16 bytes of the widest operand (4 floats, 8
/// halves, 2 doubles, 16 bools); narrower operands move V * their size.
template <class Kernel>
inline constexpr int vector_width_v = int(std::max<std::size_t>(1, kVectorBytes / Kernel::kElementBytes));

/// The collapsed extents of a strided iteration space (IterationSpace::shape),
/// in a form that can be passed to a kernel.
struct RowGeometry {
  std::int64_t extent[kMaxRank] = {};
  std::int64_t inner = 1;  // extent[rank - 1], kept apart so that no index into extent is dynamic
  int rank = 1;
};

inline RowGeometry row_geometry(const IterationSpace& space) {
  RowGeometry rows;
  rows.rank = space.rank();
  for (int d = 0; d < space.rank(); ++d) rows.extent[d] = space.shape[d];
  rows.inner = space.inner();
  return rows;
}

/// One thread's share of a launch: elements start, start + step, ... (the
/// grid-stride loop), `step` being the number of threads in the grid. Index
/// is the type of the element index math: std::uint32_t when the space has
/// at most 2^31 - 1 elements (then i + step cannot wrap), else std::uint64_t.
/// Host-device, so that tests run it on the host, thread by thread.
///
/// Linear layout (every operand contiguous, offset == element index):
///   V > 1: thread k runs elements [kV, kV + V) with one vector access per
///          operand; the n % V tail elements go to the first threads (one
///          each in any real grid, which has at least 256 > V threads);
///   V == 1: one element per step (an operand is not aligned to V elements).
/// Strided layout: element i is row i / inner, column i % inner; the row's
/// outer coordinates position every operand's row pointer (seek), on a copy
/// of the kernel because seek writes it.
template <int V, class Index, class Kernel>
WEFT_HOST_DEVICE void run_thread(const Kernel& kernel, const RowGeometry& rows, Index n, Index start, Index step) {
  Kernel local = kernel;  // the linear layout only reads it: the compiler reads the argument in place
  if constexpr (pointwise_layout<Kernel>::linear) {
    if constexpr (V > 1) {
      const Index vectors = n / Index(V);
      for (Index k = start; k < vectors; k += step) local.template run_vector<LaneTarget, V>(std::int64_t(k) * V, false);
      for (Index i = vectors * Index(V) + start; i < n; i += step) local.run_scalar(std::int64_t(i));
    } else {
      for (Index i = start; i < n; i += step) local.run_scalar(std::int64_t(i));
    }
  } else {
    static_assert(V == 1, "the strided layout runs element by element");
    const int rank = rows.rank;
    const Index inner = Index(rows.inner);
    std::int64_t outer[kMaxRank] = {};
    for (Index i = start; i < n; i += step) {
      Index row = i / inner;
      const Index j = i - row * inner;
      // Row-major divmod by the collapsed extents; the outermost coordinate is
      // what remains (row < extent[0]), so it needs no division. Unrolled over
      // kMaxRank with a (warp-uniform) guard, so `outer` stays in registers.
      WEFT_UNROLL
      for (int d = kMaxRank - 2; d > 0; --d) {
        if (d < rank - 1) {
          const Index e = Index(rows.extent[d]);
          const Index q = row / e;
          outer[d] = std::int64_t(row - q * e);
          row = q;
        }
      }
      if (rank > 1) outer[0] = std::int64_t(row);
      local.seek(outer);
      local.run_scalar(std::int64_t(j));
    }
  }
}

}  // namespace weft::detail::cuda

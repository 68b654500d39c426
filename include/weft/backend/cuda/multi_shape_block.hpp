// SPDX-License-Identifier: MIT
/// @file What one block of a CUDA kernel of statements of different shapes runs (run_multi_shape_block),
/// its launch table and how blocks are shared among the statements. Plain C++ (host-device):
/// multi_shape.cuh's __global__ template calls it on the GPU, and tests run it on the host, block by
/// block, with any C++ compiler.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "weft/backend/cuda/pointwise_thread.hpp"
#include "weft/core/config.hpp"
#include "weft/plan/multi_shape.hpp"

namespace weft::detail::cuda {

/// The launch table of a kernel of N statements, passed by value beside the kernel: statement s
/// runs blocks [first_block[s], first_block[s + 1]) over its collapsed extents rows[s].
template <int N>
struct MultiShapeLaunch {
  RowGeometry rows[N];
  std::int64_t numel[N] = {};
  std::int32_t first_block[N + 1] = {};

  /// The statement block `block` belongs to (statements without elements own no block).
  WEFT_HOST_DEVICE int statement_of(std::uint32_t block) const {
    int s = 0;
    while (s + 1 < N && std::int64_t(block) >= first_block[s + 1]) ++s;
    return s;
  }
};

/// The argument of the multi-shape __global__ template.
template <class Kernel>
struct MultiShapeArgs {
  Kernel kernel;
  MultiShapeLaunch<Kernel::kStatements> launch;
};

/// Shares `max_blocks` blocks of `threads` threads among statements of `numel` elements: each
/// non-empty statement gets a share proportional to its elements, at least one block and no more
/// than one thread per element; fills first_block and returns the grid.
template <int N>
int share_blocks(MultiShapeLaunch<N>& launch, std::int64_t threads, std::int64_t max_blocks) {
  std::int64_t total = 0;
  for (int s = 0; s < N; ++s) total += launch.numel[s];
  std::int64_t at = 0;
  for (int s = 0; s < N; ++s) {
    launch.first_block[s] = std::int32_t(at);
    const std::int64_t n = launch.numel[s];
    if (n == 0) continue;
    const std::int64_t needed = (n + threads - 1) / threads;
    const std::int64_t share = std::max<std::int64_t>(1, max_blocks * n / std::max<std::int64_t>(total, 1));
    at += std::min(needed, share);
  }
  launch.first_block[N] = std::int32_t(at);
  return int(at);
}

/// What block `block` of a multi-shape launch runs: its statement's grid-stride loop (run_thread,
/// element by element in the strided layout) as if that statement's blocks were a grid of their own.
/// Index: as run_thread (32-bit when every statement has at most 2^31 - 1 elements).
template <class Index, class Kernel, int N>
WEFT_HOST_DEVICE void run_multi_shape_block(const Kernel& kernel, const MultiShapeLaunch<N>& launch,
                                            std::uint32_t block, std::uint32_t thread, std::uint32_t threads) {
  const int s = launch.statement_of(block);
  const Index start = Index(block - std::uint32_t(launch.first_block[s])) * Index(threads) + Index(thread);
  const Index step = Index(launch.first_block[s + 1] - launch.first_block[s]) * Index(threads);
  kernel.visit(s, [&](const auto& statement) { run_thread<1>(statement, launch.rows[s], Index(launch.numel[s]), start, step); });
}

}  // namespace weft::detail::cuda

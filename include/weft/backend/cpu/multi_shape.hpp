// SPDX-License-Identifier: MIT
/// @file The CPU executor for statements of different shapes: their elements split across threads in ONE parallel region, each piece run by its statement's packet loop.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "weft/backend/cpu/foreach.hpp"
#include "weft/backend/cpu/pointwise.hpp"
#include "weft/plan/iteration.hpp"

namespace weft::detail::cpu {

/// Elements of the runs a streamed multi-shape statement is cut into: a multiple of every packet
/// length (64 one-byte lanes of AVX-512), so that each piece stores whole aligned packets.
/// (Outside the host-only part: the plan that uses it is compiled by nvcc's device pass too.)
inline constexpr std::int64_t kStreamGranule = 64;

}  // namespace weft::detail::cpu

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu {

/// Runs statement s of `kernel` (a MultiShapeKernel) over spaces[s], for every s: thread t takes
/// elements [t*total/T, (t+1)*total/T) of the statements' elements laid end to end
/// (for_each_list_piece), so statements of any sizes cost one fork/join and balance across threads.
/// Each piece runs row by row in its statement's own packets (run_range), with non-temporal
/// stores for the statements marked in `stream` (then every statement's size and each streamed
/// row are whole kStreamGranule-element runs from aligned addresses, and the pieces' boundaries
/// are multiples of it: multi_shape_streaming).
template <class Kernel>
void run_multi_shape(const Kernel& kernel, const std::vector<IterationSpace>& spaces, int threads,
                     const std::vector<bool>& stream) {
  std::vector<std::int64_t> sizes;
  for (const IterationSpace& space : spaces) sizes.push_back(space.numel);
  const bool any_stream = std::find(stream.begin(), stream.end(), true) != stream.end();
  for_each_list_piece(
      sizes, threads,
      [&](int) {
        return [&, local = kernel](std::int64_t s, std::int64_t begin, std::int64_t end) mutable {
          local.visit(int(s), [&](auto& statement) {
            run_range(statement, spaces[std::size_t(s)], begin, end, stream[std::size_t(s)]);
          });
        };
      },
      any_stream ? kStreamGranule : 1);
}

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)

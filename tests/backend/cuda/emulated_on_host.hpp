// SPDX-License-Identifier: MIT
/// @file EmulatedOnHost: the executor of the pointwise bodies (pointwise_suite.hpp) that runs the CUDA
/// kernel's thread loop (cuda::run_thread, the function every GPU thread runs) on the host, one
/// simulated thread after another over CPU tensors. Plain C++ (pointwise_thread.hpp needs no nvcc).
/// Its run counts are one set for the whole program: a check compares them before and after its own calls.
#pragma once

#include <cstdint>
#include <vector>

#include <weft/backend/cuda/pointwise_thread.hpp>
#include <weft/expr/tree.hpp>

#include "backend/cuda/pointwise_suite.hpp"

namespace pointwise_suite {
inline namespace WEFT_BACKEND_ABI {  // its helpers reach weft's backends (docs/architecture.md, ODR safety)

/// run_thread over every simulated thread of a grid, on the host.
struct EmulatedOnHost {
  static Device device() { return Device::cpu(); }

  /// Runs per instantiation: vector, linear scalar, strided 32-bit, strided 64-bit.
  enum Kind { vector, linear_scalar, strided32, strided64, kinds };
  static inline std::int64_t runs[kinds] = {};

  /// Each run takes the next configuration: 1, 3, 256 or 4099 threads, and
  /// alternately the first instantiation the launcher would pick (the vector
  /// kernel when aligned; 32-bit index math when strided) and the other one
  /// (the scalar kernel; 64-bit index math).
  template <class... Stmts>
  static void run(Stmts... stmts) {
    static int calls = 0;
    const int config = calls++;
    static const std::uint64_t thread_counts[] = {1, 3, 256, 4099};
    const std::uint64_t threads = thread_counts[config % 4];
    const bool first_choice = (config / 4) % 2 == 0;

    Shape shape;
    ((shape = stmts.dst.shape()), ...);
    std::vector<weft::Strides> strides{stmts.dst.strides()...};
    auto add_leaves = [&](auto& rhs) {
      weft::detail::for_each_leaf(rhs, [&](auto& leaf) {
        strides.push_back(weft::broadcast_strides(leaf.tensor.shape(), leaf.tensor.strides(), shape));
      });
    };
    (add_leaves(stmts.rhs), ...);
    const weft::detail::IterationSpace space = weft::detail::plan_iteration(shape, strides);
    if (space.numel == 0) return;
    if (space.linear) emulate<true>(space, threads, first_choice, stmts...);
    else emulate<false>(space, threads, first_choice, stmts...);
  }

  template <bool kLinear, class... Stmts>
  static void emulate(const weft::detail::IterationSpace& space, std::uint64_t threads, bool first_choice,
                      Stmts&... stmts) {
    namespace cuda = weft::detail::cuda;
    using Kernel = weft::detail::PointwiseKernel<kLinear, Stmts...>;
    weft::detail::BuildContext<typename Kernel::Shared> ctx;
    ctx.space = &space;
    const Kernel kernel(space, std::move(ctx), stmts...);
    const cuda::RowGeometry rows = cuda::row_geometry(space);
    auto grid = [&]<int V, class I>(Kind kind) {
      ++runs[kind];
      for (std::uint64_t t = 0; t < threads; ++t)
        cuda::run_thread<V>(kernel, rows, I(space.numel), I(t), I(threads));
    };
    if constexpr (kLinear) {
      constexpr int V = cuda::vector_width_v<Kernel>;
      if (first_choice && kernel.template vec_aligned<V>()) grid.template operator()<V, std::uint64_t>(vector);
      else grid.template operator()<1, std::uint64_t>(linear_scalar);
    } else {
      if (first_choice) grid.template operator()<1, std::uint32_t>(strided32);
      else grid.template operator()<1, std::uint64_t>(strided64);
    }
  }
};

}  // namespace WEFT_BACKEND_ABI
}  // namespace pointwise_suite

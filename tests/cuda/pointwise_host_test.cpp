// SPDX-License-Identifier: MIT
/// @file The cuda suite's pointwise bodies (pointwise_suite.hpp) on the CUDA kernel's thread loop
/// (cuda::run_thread, the function every GPU thread runs), executed on the host one simulated thread
/// after another over CPU tensors: the index math, the vector path and the shared-subexpression
/// cache are checked on every machine that builds the cuda suite, GPU or not. Plain C++: g++
/// compiles it (pointwise_thread.hpp needs no nvcc).
#include <doctest/doctest.h>

#include <cstdint>
#include <iterator>
#include <vector>

#include <weft/backend/cuda/pointwise_thread.hpp>

#include "cuda/pointwise_suite.hpp"

namespace {

using namespace pointwise_suite;

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
    ((shape = stmts.dst->shape()), ...);
    std::vector<weft::Strides> strides{stmts.dst->strides()...};
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

}  // namespace

TEST_SUITE("cuda") {

TEST_CASE_TEMPLATE("cuda thread loop on the host: a * sigmoid(b) + c over random shapes, broadcasts and views", T,
                   float, double, weft::half, weft::bfloat16) {
  chain_over_random_shapes<EmulatedOnHost, T>(40);
}

TEST_CASE_TEMPLATE("cuda thread loop on the host: integer arithmetic over random shapes and views", T, std::int32_t,
                   std::int64_t) {
  integers_over_random_shapes<EmulatedOnHost, T>(24);
}

TEST_CASE("cuda thread loop on the host: bools, comparisons, where, casts, mixed element widths") {
  bools_casts_and_mixed_widths<EmulatedOnHost>(24);
}

TEST_CASE_TEMPLATE("cuda thread loop on the host: every alignment and tail length", T, float, double, weft::half,
                   weft::bfloat16, std::int32_t, std::int64_t, bool) {
  every_alignment_and_tail<EmulatedOnHost, T>();
}

TEST_CASE_TEMPLATE("cuda thread loop on the host: fused outputs with shared subexpressions", P, float,
                   weft::bfloat16) {
  fused_optimizer_step<EmulatedOnHost, P>(optimizer_shapes_host);
}

TEST_CASE("cuda thread loop on the host: two statements that swap two tensors") { fused_swap<EmulatedOnHost>(); }

TEST_CASE("cuda thread loop on the host: the tests reach every instantiation") {
  const auto before = std::vector<std::int64_t>(std::begin(EmulatedOnHost::runs), std::end(EmulatedOnHost::runs));
  every_alignment_and_tail<EmulatedOnHost, weft::half>();
  fused_optimizer_step<EmulatedOnHost, float>({Shape{37, 129}});
  integers_over_random_shapes<EmulatedOnHost, std::int32_t>(24);
  for (int kind = 0; kind < EmulatedOnHost::kinds; ++kind) {
    CAPTURE(kind);
    CHECK(EmulatedOnHost::runs[kind] > before[std::size_t(kind)]);
  }
}

}  // TEST_SUITE("cuda")

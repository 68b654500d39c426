// SPDX-License-Identifier: MIT
/// @file ForeachEmulatedOnHost for the foreach bodies (foreach_suite.hpp): the foreach kernel's
/// per-block body (cuda::run_foreach_block, the function every GPU block runs) executed on the host
/// for every block of every launch the planner packs, over CPU tensors, cycling through three
/// launch tables. Plain C++ (foreach_block.hpp needs no nvcc, only the CUDA runtime's version).
/// Its counts are one set for the whole program: a check compares them before and after its calls.
#pragma once

#include <cstdint>
#include <memory>
#include <tuple>
#include <type_traits>
#include <vector>

#include <weft/backend/cuda/foreach_block.hpp>

#include "backend/cuda/foreach_suite.hpp"

namespace foreach_suite {
inline namespace WEFT_BACKEND_ABI {  // its helpers reach weft's backends (docs/architecture.md, ODR safety)

/// The executor the foreach bodies take (as OnCuda): each run packs its launches and runs every
/// block's body, thread by thread, on the host.
struct ForeachEmulatedOnHost {
  static Device device() { return Device::cpu(); }

  /// Launch tables the runs cycle through: the kernel's 4 KB table and its
  /// large table, both with the chunk the planner picks for an H100-sized GPU
  /// (132 SMs x 8 blocks) and 256 threads a block; and a table of 64 words and
  /// 8 blocks with chunks of one vector per thread of a 3-thread block, so
  /// that long lists take many launches and tensors are cut across them.
  enum Config { small_table, large_table, tiny_table, configs };
  using TinyLaunch = wd::ListLaunch<64, 8>;

  static inline std::int64_t runs[configs] = {};
  static inline std::int64_t multi_launch_runs = 0;  // runs that took more than one launch
  static inline std::int64_t split_tensors = 0;      // launches whose first tensor continues from the previous one
  static inline std::int64_t vector_blocks = 0, scalar_blocks = 0;

  template <class... Stmts>
  static void run(Stmts... stmts) {
    static int calls = 0;
    const int config = calls++ % configs;
    const auto& first = *std::get<0>(std::tie(stmts...)).dst;
    std::vector<std::int64_t> sizes;
    std::int64_t total = 0;
    for (const auto& t : first) {
      sizes.push_back(t.numel());
      total += t.numel();
    }
    const wd::IterationSpace space = wd::foreach_space(total);
    wd::ListTable table;
    const auto kernel = wd::build_foreach_kernel(space, table, stmts...);
    using Kernel = std::remove_cv_t<decltype(kernel)>;
    if (total == 0) return;
    constexpr std::int64_t V = wc::vector_width_v<Kernel>;
    const std::int64_t resident = 132 * 8;
    ++runs[config];
    if (config == small_table)
      emulate<typename wc::SmallForeachArgs<Kernel>::Launch>(kernel, table, sizes, wc::kBlockThreads * V, resident,
                                                          wc::kBlockThreads, false);
    else if (config == large_table)
      emulate<typename wc::LargeForeachArgs<Kernel>::Launch>(kernel, table, sizes, wc::kBlockThreads * V, resident,
                                                          wc::kBlockThreads, false);
    else emulate<TinyLaunch>(kernel, table, sizes, 3 * V, 4, 3, true);
  }

  template <class Launch, class Kernel>
  static void emulate(const Kernel& kernel, const wd::ListTable& table, const std::vector<std::int64_t>& sizes,
                      std::int64_t unit, std::int64_t resident, std::uint32_t threads, bool smallest_chunk) {
    constexpr int V = wc::vector_width_v<Kernel>;
    wd::ForeachLaunchPlan plan = wd::plan_foreach_launches<Launch>(table, sizes, unit, resident);
    REQUIRE(plan.tensors_per_launch > 0);
    if (smallest_chunk) {
      plan.chunk = unit;
      plan.chunks = wd::count_chunks(sizes, unit);
      plan.launches = wd::count_list_launches(sizes, unit, plan.tensors_per_launch, plan.blocks_per_launch);
    }
    CHECK(plan.chunk % V == 0);
    const std::vector<char> vector = wc::vector_tensors(table, sizes.size(), V);
    auto launch = std::make_unique<Launch>();
    int launches = 0;
    wd::pack_list_launches(table, sizes, vector, plan, *launch, [&](const Launch& l) {
      ++launches;
      REQUIRE(l.tensors <= plan.tensors_per_launch);
      REQUIRE(l.blocks <= Launch::blocks_capacity);
      split_tensors += l.block_chunk[0] != 0;
      for (int b = 0; b < l.blocks; ++b) {
        (l.vector_aligned(l.block_tensor[b]) ? vector_blocks : scalar_blocks) += 1;
        for (std::uint32_t t = 0; t < threads; ++t) wc::run_foreach_block<V>(kernel, l, std::uint32_t(b), t, threads);
      }
    });
    CHECK(launches == plan.launches);
    multi_launch_runs += launches > 1;
  }
};

}  // namespace WEFT_BACKEND_ABI
}  // namespace foreach_suite

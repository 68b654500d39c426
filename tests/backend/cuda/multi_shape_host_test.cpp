// SPDX-License-Identifier: MIT
/// @file The cuda suite's bodies for statements of different shapes (multi_shape_suite.hpp) on the
/// multi-shape kernel's per-block body (cuda::run_multi_shape_block, the function every GPU block
/// runs), executed on the host for every block and thread over CPU tensors, with the launch table
/// the launcher fills (share_blocks) for an H100-sized grid, a tiny one and a single block, in
/// 32-bit and 64-bit index math. Plain C++: g++ compiles it, and it runs without a GPU.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include <weft/backend/cuda/multi_shape_block.hpp>
#include <weft/backend/multi_shape.hpp>

#include "backend/cuda/multi_shape_suite.hpp"

namespace {

using weft::Device;
namespace wd = weft::detail;
namespace wc = weft::detail::cuda;

/// The executor of the bodies: plans the statements as the launcher does and runs every block.
struct MultiShapeOnHost {
  static Device device() { return Device::cpu(); }

  /// (threads per block, most blocks): a full H100 (132 SMs x 8 blocks of 256 threads), 5 blocks of
  /// 3 threads (each thread loops over many elements), one block of one thread.
  static constexpr std::int64_t kConfigs[][2] = {{256, 132 * 8}, {3, 5}, {1, 1}};
  static inline std::int64_t runs = 0, blocks_run = 0;

  template <class... Stmts>
  static void run(Stmts... stmts) {
    static int calls = 0;
    const int config = calls++;
    wd::OperandStorage<Stmts...> storage;
    wd::KernelOperands k = wd::kernel_operands(storage, false, stmts...);
    const Device d = wd::check_statement_operands("emulated", k);
    REQUIRE(!wd::statements_share_shape(k));
    const std::vector<wd::IterationSpace> spaces = wd::plan_multi_shape_statements("emulated", k, d, stmts...);
    const auto kernel = wd::build_multi_shape_kernel(spaces, stmts...);
    using Kernel = std::remove_cv_t<decltype(kernel)>;
    wc::MultiShapeLaunch<Kernel::kStatements> launch;
    for (int s = 0; s < Kernel::kStatements; ++s) {
      launch.rows[s] = wc::row_geometry(spaces[std::size_t(s)]);
      launch.numel[s] = spaces[std::size_t(s)].numel;
    }
    const std::int64_t threads = kConfigs[config % 3][0], max_blocks = kConfigs[config % 3][1];
    const int grid = wc::share_blocks(launch, threads, max_blocks);
    CHECK(grid <= std::max<std::int64_t>(max_blocks, Kernel::kStatements));
    for (int b = 0; b < grid; ++b)
      for (std::int64_t t = 0; t < threads; ++t) {
        if ((config / 3) % 2 == 0)
          wc::run_multi_shape_block<std::uint32_t>(kernel, launch, std::uint32_t(b), std::uint32_t(t), std::uint32_t(threads));
        else
          wc::run_multi_shape_block<std::uint64_t>(kernel, launch, std::uint32_t(b), std::uint32_t(t), std::uint32_t(threads));
      }
    ++runs;
    blocks_run += grid;
  }
};

}  // namespace

TEST_SUITE("cuda") {

TEST_CASE("multi-shape blocks on the host: four statements of four shapes, every grid and index width") {
  for (std::uint64_t round = 0; round < 6; ++round) multi_shape_suite::statements_of_four_shapes<MultiShapeOnHost>(round);
  CHECK(MultiShapeOnHost::runs >= 6);
}

TEST_CASE("multi-shape blocks on the host: statements read the values from before the call") {
  for (std::uint64_t round = 0; round < 3; ++round) multi_shape_suite::statements_reading_each_other<MultiShapeOnHost>(round);
}

TEST_CASE("multi-shape launch table: blocks shared by elements, every non-empty statement one at least") {
  wc::MultiShapeLaunch<4> launch;
  launch.numel[0] = 1000000, launch.numel[1] = 0, launch.numel[2] = 10, launch.numel[3] = 3000000;
  const int grid = wc::share_blocks(launch, 256, 1000);
  CHECK(launch.first_block[0] == 0);
  CHECK(launch.first_block[1] - launch.first_block[0] == 249);  // 1000 x 1000000 / 4000010 blocks
  CHECK(launch.first_block[2] == launch.first_block[1]);        // no elements, no block
  CHECK(launch.first_block[3] - launch.first_block[2] == 1);    // 10 elements: one block
  CHECK(grid - launch.first_block[3] == 749);
  CHECK(launch.statement_of(0) == 0);
  CHECK(launch.statement_of(249) == 2);
  CHECK(launch.statement_of(250) == 3);
  CHECK(launch.statement_of(std::uint32_t(grid - 1)) == 3);
}

}  // TEST_SUITE("cuda")

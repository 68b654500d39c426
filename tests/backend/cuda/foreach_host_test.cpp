// SPDX-License-Identifier: MIT
/// @file The cuda suite's foreach launch tables (capacity and packing, host only), and a fused
/// AdamW step over mixed-dtype lists on the foreach kernel's per-block body executed on the
/// host (foreach_emulated_on_host.hpp; the other bodies are in foreach_host_blocks_test.cpp). Plain
/// C++: g++ compiles it, and it runs without a GPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <weft/backend/cuda/foreach_block.hpp>

#include "backend/cuda/foreach_emulated_on_host.hpp"
#include "backend/cuda/foreach_suite.hpp"

namespace {

using namespace foreach_suite;

// ------------------------------------------- an AdamW-shaped kernel type

/// The statements of an AdamW step as weft::optim writes it: numbers for the
/// hyperparameters, four lists (p, g, m, v) named 14 times.
template <class P, class G>
auto adamw_statements(TensorList<P>& p, TensorList<G>& g, TensorList<float>& m, TensorList<float>& v) {
  const double b1 = 0.9, b2 = 0.999, eps = 1e-8, lr = 1e-3, wdecay = 0.01;
  auto m1 = b1 * m + (1 - b1) * g;
  auto v1 = b2 * v + (1 - b2) * g * g;
  return std::make_tuple(weft::assign(m, m1), weft::assign(v, v1),
                         weft::assign(p, p * (1 - lr * wdecay) - lr * m1 / (weft::sqrt(v1) + eps)));
}

template <class Tuple>
struct kernel_of;
template <class... Stmts>
struct kernel_of<std::tuple<Stmts...>> {
  using type = wd::PointwiseKernel<false, Stmts...>;
};

/// A ListTable of `lists` distinct lists of float tensors of `sizes`, at
/// 256-byte aligned fake addresses (never dereferenced), and the pointer arrays its rows view.
struct FakeTable {
  std::vector<std::vector<void*>> rows;
  wd::ListTable table;
};
FakeTable fake_table(const std::vector<std::int64_t>& sizes, int lists) {
  FakeTable fake;
  fake.rows.resize(std::size_t(lists));
  std::uintptr_t next = std::uintptr_t(1) << 40;
  for (std::vector<void*>& pointers : fake.rows) {
    for (std::int64_t n : sizes) {
      pointers.push_back(reinterpret_cast<void*>(next));
      next += (std::uintptr_t(n) * 4 + 256) / 256 * 256;  // empty tensors too get an address of their own
    }
    fake.table.pointers.push_back(pointers);
    fake.table.element_bytes.push_back(4);
    fake.table.list_ids.push_back(reinterpret_cast<const void*>(std::uintptr_t(fake.table.pointers.size())));
  }
  return fake;
}

/// Packs `plan` and checks that every chunk of every tensor lands in exactly
/// one block, with the table holding that tensor's pointers and size.
template <class Launch>
void check_packing(const wd::ListTable& table, const std::vector<std::int64_t>& sizes, const wd::ForeachLaunchPlan& plan) {
  std::vector<std::vector<int>> seen(sizes.size());
  for (std::size_t k = 0; k < sizes.size(); ++k)
    seen[k].assign(std::size_t((sizes[k] + plan.chunk - 1) / plan.chunk), 0);
  const std::vector<char> vector(sizes.size(), 1);
  auto launch = std::make_unique<Launch>();
  int launches = 0;
  std::size_t bad = 0;
  wd::pack_list_launches(table, sizes, vector, plan, *launch, [&](const Launch& l) {
    ++launches;
    CHECK(l.tensors >= 1);
    CHECK(l.tensors <= plan.tensors_per_launch);
    CHECK(l.blocks <= Launch::blocks_capacity);
    for (int b = 0; b < l.blocks; ++b) {
      const int local = l.block_tensor[b];
      // Tensor k is found by its pointer in list 0.
      const auto it = std::find(table.pointers[0].begin(), table.pointers[0].end(), l.pointer(0, local));
      if (it == table.pointers[0].end()) {
        ++bad;
        continue;
      }
      const std::size_t k = std::size_t(it - table.pointers[0].begin());
      bad += l.size(local) != sizes[k];
      for (std::size_t r = 0; r < table.pointers.size(); ++r) bad += l.pointer(int(r), local) != table.pointers[r][k];
      seen[k][l.block_chunk[b]] += 1;
    }
  });
  CHECK(launches == plan.launches);
  for (const auto& chunks : seen)
    for (int c : chunks) bad += c != 1;
  CHECK_MESSAGE(bad == 0, bad, " chunks were missed, repeated or given the wrong tensor");
}

std::string describe(const wd::ForeachLaunchPlan& plan) {
  return wd::cat(plan.tensors, " tensors, ", plan.elements, " elements: ", plan.launches, " launch(es) of up to ",
                 plan.tensors_per_launch, " tensors x ", plan.blocks_per_launch, " blocks, ", plan.chunks,
                 " chunks of ", plan.chunk, " elements");
}

}  // namespace

TEST_SUITE("cuda") {

// ============================================ launch tables (host only)

TEST_CASE("foreach launch tables: capacity from the kernel argument limit, and packing") {
  TensorList<weft::bfloat16> p;
  TensorList<weft::half> g;
  TensorList<float> m, v;
  using Kernel = kernel_of<decltype(adamw_statements(p, g, m, v))>::type;
  using Small = wc::SmallForeachArgs<Kernel>;
  using Large = wc::LargeForeachArgs<Kernel>;
  static_assert(wd::list_operands<Kernel>::lists == 14);  // 3 destinations + 11 list leaves
  static_assert(wd::list_operands<Kernel>::numbers == 0);
  static_assert(std::is_trivially_copyable_v<Small> && std::is_trivially_copyable_v<Large>);

  REQUIRE(Small::fits);
  CHECK(sizeof(Small) <= wc::kKernelArgBytes);
  CHECK(wc::kKernelArgBytes - sizeof(Small) < 8 + wc::kKernelArgBytes % 8);  // no room for another word
  CHECK(Small::Capacity::kTensors > 0);
  CHECK(Small::Capacity::kBlocks > 0);
  CHECK(sizeof(Large) <= wc::kLargeKernelArgBytes);
  CHECK(wc::kLargeKernelArgBytes - sizeof(Large) < 8 + wc::kLargeKernelArgBytes % 8);
  if (CUDART_VERSION >= 12010) CHECK(wc::kLargeKernelArgBytes == 32764);
  MESSAGE("AdamW kernel (", wd::list_operands<Kernel>::lists, " list operands, 4 distinct lists): ", sizeof(Kernel),
          " bytes; 4 KB argument: ", Small::Capacity::kWords, " words, ", Small::Capacity::kBlocks, " blocks, ",
          Small::Capacity::kTensors, " tensors (all operands distinct) or ",
          Small::Capacity::kWords / 5, " (4 lists); ", wc::kLargeKernelArgBytes, "-byte argument: ",
          Large::Capacity::kWords, " words, ", Large::Capacity::kBlocks, " blocks, ", Large::Capacity::kTensors,
          " or ", Large::Capacity::kWords / 5, " tensors");

  // Launch plans on an H200-sized GPU (132 SMs x 8 resident blocks), float
  // vectors of 4: a 150-tensor model and a list of 10,000 small tensors.
  const std::int64_t unit = wc::kBlockThreads * wc::vector_width_v<Kernel>, resident = 132 * 8;
  std::vector<std::int64_t> model;
  for (int layer = 0; layer < 25; ++layer)
    for (std::int64_t n : {1024 * 1024, 1024 * 4096, 4096 * 1024, 1024, 1024, 4096}) model.push_back(n);
  std::vector<std::int64_t> many(10000);
  std::mt19937_64 rng(0x5eedA000u);
  for (auto& n : many) n = std::int64_t(1 + rng() % 8192);
  std::vector<std::int64_t> empty_ones = {0, 5, 0, 0, 1, 0};
  for (const auto* sizes : {&model, &many, &empty_ones}) {
    const FakeTable fake = fake_table(*sizes, 4);
    const wd::ListTable& table = fake.table;
    const wd::ForeachLaunchPlan small = wd::plan_foreach_launches<typename Small::Launch>(table, *sizes, unit, resident);
    const wd::ForeachLaunchPlan large = wd::plan_foreach_launches<typename Large::Launch>(table, *sizes, unit, resident);
    MESSAGE("4 KB table: ", describe(small), "\n", wc::kLargeKernelArgBytes, "-byte table: ", describe(large));
    CHECK(small.tensors_per_launch == Small::Capacity::kWords / 5);
    CHECK(small.chunk % unit == 0);
    CHECK(large.launches <= small.launches);
    check_packing<typename Small::Launch>(table, *sizes, small);
    check_packing<typename Large::Launch>(table, *sizes, large);
    // The launches the tensors need, and no more than one more per block-map overflow.
    CHECK(small.launches >= (small.tensors + small.tensors_per_launch - 1) / small.tensors_per_launch);
    CHECK(small.launches <= (small.tensors + small.tensors_per_launch - 1) / small.tensors_per_launch +
                                (small.chunks + small.blocks_per_launch - 1) / small.blocks_per_launch);
  }
  // Chunks stay at one vector per thread while that fills the GPU, and never
  // go below it: 100 tensors of 1000 floats are 100 blocks of 1024.
  const std::vector<std::int64_t> hundred(100, 1000);
  CHECK(wd::plan_foreach_launches<typename Small::Launch>(fake_table(hundred, 4).table, hundred, unit, resident).chunk == unit);
}

// ============================== the per-block body of every launch, on the host

TEST_CASE("foreach blocks on the host: a fused AdamW step over bf16, float and half lists with a ScalarList") {
  for (std::size_t length : {1, 2, 37, 1000}) {
    CAPTURE(length);
    adamw_mixed_dtypes<ForeachEmulatedOnHost>(length);
  }
}

}  // TEST_SUITE("cuda")

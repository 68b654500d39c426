// SPDX-License-Identifier: MIT
/// @file Multi-tensor launches of foreach kernels: the launch table passed as the kernel argument, its capacity under an argument limit, packing tensors and chunks into launches.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "weft/expr/tree.hpp"
#include "weft/plan/kernel.hpp"

namespace weft::detail {

/// ListLeaf nodes in an expression tree: each occurrence is one list operand
/// of the kernel (one ListCursor, one id in the ListTable before dedup).
template <class N>
inline constexpr int list_leaf_count_v =
    int(tree_sum<N>([]<class M>(std::type_identity<M>) { return is_instance_v<M, ListLeaf>; }));

/// ListScalar nodes in an expression tree.
template <class N>
inline constexpr int list_scalar_count_v =
    int(tree_sum<N>([]<class M>(std::type_identity<M>) { return is_instance_v<M, ListScalar>; }));

/// The list operands of a foreach kernel type, counted at compile time:
/// every destination (a ListCursor) and every ListLeaf occurrence, and every
/// ListScalar occurrence. Upper bounds on the ListTable's rows, which holds
/// each distinct list once.
template <class Kernel>
struct list_operands;
template <bool kLinear, class... Stmts>
struct list_operands<PointwiseKernel<kLinear, Stmts...>> {
  static constexpr int lists = int(sizeof...(Stmts)) + (0 + ... + list_leaf_count_v<typename Stmts::expr_type>);
  static constexpr int numbers = (0 + ... + list_scalar_count_v<typename Stmts::expr_type>);
};

/// One 8-byte cell of a launch table: a base pointer, a ScalarList number,
/// or a tensor's size word.
union ListWord {
  void* pointer;
  double number;
  std::int64_t size;  // (elements << 1) | (1 when every member is aligned for the vector path)
};

/// The fixed part of a launch table.
struct ForeachLaunchHeader {
  std::int64_t chunk = 0;      // elements per chunk (a block's share of a tensor)
  std::int32_t tensors = 0;    // tensors in this launch (local indices 0 .. tensors-1)
  std::int32_t blocks = 0;     // blocks in this launch (the grid)
  std::int32_t stride = 0;     // words per row: the most tensors one launch holds
  std::int32_t number_row = 0; // rows [0, number_row): pointers by list id; then numbers by ScalarList id
  std::int32_t size_row = 0;   // the last row: size words
  std::int32_t unused = 0;
};

/// The metadata of one foreach launch, passed BY VALUE as a kernel
/// argument (it lives in the kernel's parameter space; nothing is copied to
/// device memory). `words` is a [row][stride] table: one row of base pointers
/// per distinct list, one row of numbers per distinct ScalarList, one row of
/// size words; the block map gives each block its (local tensor, chunk).
/// It is also the `table` of the kernel's select(k, table).
template <int kWords, int kBlocks>
struct ListLaunch : ForeachLaunchHeader {
  static constexpr int words_capacity = kWords;
  static constexpr int blocks_capacity = kBlocks;

  ListWord words[kWords];
  std::uint32_t block_chunk[kBlocks];   // chunk of its tensor each block runs
  std::uint16_t block_tensor[kBlocks];  // local tensor index of each block

  WEFT_HOST_DEVICE void* pointer(int id, std::int64_t k) const { return words[id * stride + k].pointer; }
  WEFT_HOST_DEVICE double number(int id, std::int64_t k) const { return words[(number_row + id) * stride + k].number; }
  WEFT_HOST_DEVICE std::int64_t size(int k) const { return words[size_row * stride + k].size >> 1; }
  WEFT_HOST_DEVICE bool vector_aligned(int k) const { return (words[size_row * stride + k].size & 1) != 0; }
};

/// Most blocks one launch table holds: 2048 fill the largest GPUs (148 SMs x
/// 8 resident blocks of 256 threads = 1184) more than once.
inline constexpr int kMaxForeachBlocks = 2048;

/// The kernel's argument: the kernel object and one launch table, sized so
/// that the whole argument fits in kArgBytes. Of the bytes the kernel object
/// leaves, a third goes to the block map (6 bytes a block, at most
/// kMaxForeachBlocks) and the rest to the words: every tensor needs at least one
/// block but costs 8 bytes per table row, so this split keeps several blocks
/// per tensor without starving long lists of small tensors.
template <class Kernel, std::size_t kArgBytes>
struct ListLaunchCapacity {
  static constexpr int kLists = list_operands<Kernel>::lists;
  static constexpr int kNumbers = list_operands<Kernel>::numbers;
  /// Table rows when every operand is a different list (the fewest tensors per launch).
  static constexpr int kRows = kLists + kNumbers + 1;
  static constexpr std::ptrdiff_t kFree =
      std::ptrdiff_t(kArgBytes / 8 * 8) - std::ptrdiff_t(sizeof(Kernel)) - std::ptrdiff_t(sizeof(ForeachLaunchHeader));
  static constexpr int kBlocks = int(std::clamp<std::ptrdiff_t>(kFree / 3 / 6, 1, kMaxForeachBlocks));
  static constexpr std::ptrdiff_t kWordBytes = kFree - (6 * kBlocks + 7) / 8 * 8;
  /// Whether at least one tensor (kRows words) and one block fit.
  static constexpr bool kFits = kWordBytes / 8 >= kRows;
  static constexpr int kWords = kFits ? int(kWordBytes / 8) : 1;
  /// Tensors per launch when every operand is a different list.
  static constexpr int kTensors = std::min(kWords / kRows, 65535);
};

template <class Kernel, std::size_t kArgBytes>
struct ForeachLaunchArgs {
  using Capacity = ListLaunchCapacity<Kernel, kArgBytes>;
  using Launch = ListLaunch<Capacity::kWords, Capacity::kBlocks>;
  static constexpr std::size_t arg_bytes = kArgBytes;
  static constexpr bool fits = Capacity::kFits;

  Kernel kernel;
  Launch launch;
};

/// Elements per chunk never exceed this: a chunk's offsets stay 32-bit.
inline constexpr std::int64_t kMaxListChunk = std::int64_t(1) << 30;

/// Vectors per thread in a chunk once the GPU is full: a block walks its
/// chunk in kForeachIlp steps of blockDim vectors.
inline constexpr std::int64_t kForeachIlp = 4;

/// How one foreach call is cut into launches (see plan_foreach_launches).
struct ForeachLaunchPlan {
  std::int64_t chunk = 0;      // elements per chunk
  std::int64_t chunks = 0;     // blocks over all launches
  std::int64_t elements = 0;
  int tensors = 0;             // non-empty tensors (empty ones take no block)
  int rows = 0;                // table rows: distinct lists + distinct ScalarLists + sizes
  int tensors_per_launch = 0;  // capacity at this call's rows
  int blocks_per_launch = 0;
  int launches = 0;
  std::size_t arg_bytes = 0;   // sizeof the kernel argument (kernel + table)
  std::size_t arg_limit = 0;   // the limit it was sized for
};

inline std::int64_t count_chunks(const std::vector<std::int64_t>& sizes, std::int64_t chunk) {
  std::int64_t chunks = 0;
  for (std::int64_t n : sizes) chunks += (n + chunk - 1) / chunk;
  return chunks;
}

/// Greedy packing, tensor by tensor: each launch takes tensors while its
/// table has room and their chunks while its block map has room. A tensor
/// whose chunks do not all fit continues, with its remaining chunks, as tensor
/// 0 of the next launch (its pointers are written again). Empty tensors are
/// skipped. Calls add_tensor(k, local), add_block(local, chunk) and
/// flush() (once per launch, when it is full or the list ends).
template <class AddTensor, class AddBlock, class Flush>
void walk_foreach_launches(const std::vector<std::int64_t>& sizes, std::int64_t chunk, int max_tensors, int max_blocks,
                        AddTensor&& add_tensor, AddBlock&& add_block, Flush&& flush) {
  int tensors = 0, blocks = 0;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const std::int64_t chunks = (sizes[k] + chunk - 1) / chunk;
    for (std::int64_t c = 0; c < chunks;) {
      if (tensors == max_tensors || blocks == max_blocks) {
        flush(tensors, blocks);
        tensors = blocks = 0;
      }
      const int local = tensors++;
      add_tensor(k, local);
      const std::int64_t take = std::min<std::int64_t>(chunks - c, max_blocks - blocks);
      for (std::int64_t i = 0; i < take; ++i) add_block(blocks++, local, c + i);
      c += take;
    }
  }
  if (blocks > 0) flush(tensors, blocks);
}

inline int count_list_launches(const std::vector<std::int64_t>& sizes, std::int64_t chunk, int max_tensors,
                               int max_blocks) {
  int launches = 0;
  walk_foreach_launches(
      sizes, chunk, max_tensors, max_blocks, [](std::size_t, int) {}, [](int, int, std::int64_t) {},
      [&](int, int) { ++launches; });
  return launches;
}

/// Chooses the chunk size of a call and counts its launches for one launch
/// table type. `unit` is blockDim x the vector width (one vector per thread);
/// `resident` is how many blocks the GPU holds at once (SMs x occupancy).
///   1. Chunks start at `unit` and double, up to kForeachIlp units, while the
///      call still has at least `resident` chunks: small calls get enough
///      blocks to fill the GPU, larger ones kForeachIlp vectors per thread.
///   2. They keep doubling while the block map, not the table, would set the
///      number of launches (more chunks than blocks_per_launch x the launches
///      the tensors need): a large tensor costs bigger chunks, not launches;
///      and while a tensor would have 2^32 chunks (block_chunk is 32-bit).
template <class Launch>
ForeachLaunchPlan plan_foreach_launches(const ListTable& table, const std::vector<std::int64_t>& sizes, std::int64_t unit,
                                  std::int64_t resident) {
  ForeachLaunchPlan plan;
  plan.rows = int(table.pointers.size() + table.numbers.size()) + 1;
  plan.tensors_per_launch = std::min(Launch::words_capacity / plan.rows, 65535);
  plan.blocks_per_launch = Launch::blocks_capacity;
  for (std::int64_t n : sizes) {
    plan.tensors += n > 0;
    plan.elements += n;
  }
  if (plan.tensors == 0 || plan.tensors_per_launch == 0) return plan;
  const std::int64_t tensor_launches = (plan.tensors + plan.tensors_per_launch - 1) / plan.tensors_per_launch;
  const std::int64_t largest = *std::max_element(sizes.begin(), sizes.end());
  std::int64_t chunk = unit;
  while (chunk < unit * kForeachIlp && count_chunks(sizes, chunk * 2) >= resident) chunk *= 2;
  while (chunk < kMaxListChunk && count_chunks(sizes, chunk) > tensor_launches * plan.blocks_per_launch) chunk *= 2;
  while ((largest - 1) / chunk > std::int64_t(UINT32_MAX)) chunk *= 2;  // block_chunk is 32-bit
  plan.chunk = chunk;
  plan.chunks = count_chunks(sizes, chunk);
  plan.launches = count_list_launches(sizes, chunk, plan.tensors_per_launch, plan.blocks_per_launch);
  return plan;
}

/// Whether every list member of tensor k is aligned to V of its elements, so
/// that the vector path (V elements per access, from multiples of V) applies.
inline bool list_vector_aligned(const ListTable& table, std::size_t k, int V) {
  for (std::size_t r = 0; r < table.pointers.size(); ++r)
    if (reinterpret_cast<std::uintptr_t>(table.pointers[r][k]) % (std::uintptr_t(table.element_bytes[r]) * V) != 0)
      return false;
  return true;
}

/// Fills `launch` with each launch of `plan` in turn and calls emit(launch)
/// after each: pointers and numbers of its tensors, their size words, its
/// block map. `vector[k]`: tensor k may take the vector path.
template <class Launch, class Emit>
void pack_list_launches(const ListTable& table, const std::vector<std::int64_t>& sizes,
                        const std::vector<char>& vector, const ForeachLaunchPlan& plan, Launch& launch, Emit&& emit) {
  const int lists = int(table.pointers.size()), numbers = int(table.numbers.size());
  launch.chunk = plan.chunk;
  launch.stride = plan.tensors_per_launch;
  launch.number_row = lists;
  launch.size_row = lists + numbers;
  walk_foreach_launches(
      sizes, plan.chunk, plan.tensors_per_launch, plan.blocks_per_launch,
      [&](std::size_t k, int local) {
        const std::int64_t s = launch.stride;
        for (int r = 0; r < lists; ++r) launch.words[r * s + local].pointer = table.pointers[r][k];
        for (int q = 0; q < numbers; ++q) launch.words[(lists + q) * s + local].number = table.numbers[q][k];
        launch.words[(lists + numbers) * s + local].size = (sizes[k] << 1) | std::int64_t(vector[k] != 0);
      },
      [&](int block, int local, std::int64_t chunk) {
        launch.block_tensor[block] = std::uint16_t(local);
        launch.block_chunk[block] = std::uint32_t(chunk);
      },
      [&](int tensors, int blocks) {
        launch.tensors = tensors;
        launch.blocks = blocks;
        emit(static_cast<const Launch&>(launch));
      });
}

}  // namespace weft::detail

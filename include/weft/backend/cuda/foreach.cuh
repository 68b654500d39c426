// SPDX-License-Identifier: MIT
/// @file The CUDA executor for foreach kernels: one foreach __global__ template per kernel type, its per-launch table passed by value as the kernel argument (nvcc only).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "weft/backend/cuda/foreach_block.hpp"
#include "weft/backend/cuda/pointwise.cuh"
#include "weft/backend/cuda/runtime.cuh"
#include "weft/core/device.hpp"
#include "weft/log/log.hpp"
#include "weft/plan/foreach_launch.hpp"

namespace weft::detail::cuda {

/// The one __global__ template of foreach kernels, instantiated per kernel
/// type and launch table size. __grid_constant__: the argument stays in
/// parameter space and select() reads the table through a reference to it,
/// with no per-thread copy.
template <class Args>
__global__ void __launch_bounds__(kBlockThreads) foreach_kernel(const __grid_constant__ Args args) {
  using Kernel = std::remove_cv_t<decltype(args.kernel)>;
  run_foreach_block<vector_width_v<Kernel>>(args.kernel, args.launch, blockIdx.x, threadIdx.x, kBlockThreads);
}

/// Resident blocks per SM of one foreach instantiation on `device` (current),
/// from the occupancy calculator; cached per instantiation and device.
template <class Args>
int foreach_blocks_per_sm(int device) {
  static std::atomic<int> cache[kCachedDevices];
  return resident_blocks(reinterpret_cast<const void*>(&foreach_kernel<Args>), kBlockThreads, cache, device,
                         "cudaOccupancyMaxActiveBlocksPerMultiprocessor (foreach kernel)");
}

/// Whether `device` takes kernel arguments above 4 KB: a Volta or newer GPU
/// and a driver of CUDA 12.1 or newer. Cached per device.
inline bool large_kernel_arguments(int device) {
  if constexpr (kLargeKernelArgBytes <= kKernelArgBytes) {
    return false;
  } else {
    static std::atomic<int> cached[kCachedDevices];  // 0: not asked, 1: no, 2: yes
    if (device >= 0 && device < kCachedDevices) {
      if (int known = cached[device].load(std::memory_order_relaxed); known > 0) return known == 2;
    }
    int driver = 0;
    check_cuda(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
    const bool large = driver >= 12010 && device_properties(device).major >= 7;
    if (device >= 0 && device < kCachedDevices) cached[device].store(large ? 2 : 1, std::memory_order_relaxed);
    return large;
  }
}

/// The foreach log line of a call's plan, e.g. "150 tensors (150 non-empty),
/// 236083200 elements in 975 chunks of 262144, 1 launch; argument 32760 of
/// 32764 bytes (kernel 472, table 32288); capacity per launch 537 tensors x
/// 1792 blocks at 5 table rows (4 lists, 0 ScalarLists, sizes), 179 tensors
/// when all 14 list and 0 ScalarList operands differ".
[[gnu::cold]] inline std::string format_list_plan(const ForeachLaunchPlan& plan, std::size_t tensors, int lists,
                                                  int numbers, int max_lists, int max_numbers, int guaranteed,
                                                  std::size_t kernel_bytes) {
  return cat(tensors, " tensors (", plan.tensors, " non-empty), ", plan.elements, " elements in ", plan.chunks,
             " chunks of ", plan.chunk, ", ", plan.launches, " launch", plan.launches == 1 ? "" : "es",
             "; argument ", plan.arg_bytes, " of ", plan.arg_limit, " bytes (kernel ", kernel_bytes, ", table ",
             plan.arg_bytes - kernel_bytes, "); capacity per launch ", plan.tensors_per_launch, " tensors x ",
             plan.blocks_per_launch, " blocks at ", plan.rows, " table rows (", lists, " lists, ", numbers,
             " ScalarLists, sizes), ", guaranteed, " tensors when all ", max_lists, " list and ", max_numbers,
             " ScalarList operands differ");
}

/// Packs and launches one table type's plan: one launch per filled table, on
/// the legacy default stream. The argument is copied when each launch is
/// issued, so the next launch refills the same host buffer.
template <class Args, class Kernel>
void launch_foreach_plan(const Kernel& kernel, const ListTable& table, const std::vector<std::int64_t>& sizes,
                      const std::vector<char>& vector, const ForeachLaunchPlan& plan, Device device) {
  constexpr int V = vector_width_v<Kernel>;
  std::unique_ptr<Args> args(new Args{kernel, {}});
  int launched = 0;
  pack_list_launches(table, sizes, vector, plan, args->launch, [&](const typename Args::Launch& launch) {
    if (log_enabled(LogComponent::cuda)) {
      int vectors = 0;
      for (int k = 0; k < launch.tensors; ++k) vectors += launch.vector_aligned(k);
      log_write(LogComponent::cuda,
                cat("foreach launch ", launched + 1, "/", plan.launches, " on cuda:", device.index(), ": grid ",
                    launch.blocks, " x ", kBlockThreads, " threads, ", launch.tensors, " tensors, chunks of ",
                    launch.chunk, " elements, ", vectors, " tensor(s) in ", V * Kernel::kElementBytes,
                    "-byte vectors, argument ", sizeof(Args), " bytes",
                    launch.block_chunk[0] != 0 ? cat("; its first tensor continues at chunk ", launch.block_chunk[0])
                                               : std::string()));
    }
    foreach_kernel<Args><<<dim3(unsigned(launch.blocks)), dim3(unsigned(kBlockThreads)), 0, 0>>>(*args);
    check_cuda(cudaGetLastError(), "foreach kernel launch");
    ++launched;
  });
}

/// Every instantiation run_foreach can launch, for nvcc's device pass (compile_kernels).
template <class Kernel>
void compile_foreach_kernels() {
  if constexpr (SmallForeachArgs<Kernel>::fits) compile_kernels(foreach_kernel<SmallForeachArgs<Kernel>>);
  if constexpr (has_large_table_v<Kernel>) compile_kernels(foreach_kernel<LargeForeachArgs<Kernel>>);
}

/// Runs a foreach kernel over every tensor of its lists on `device`: the
/// tensors and their chunks are packed into as few launches as the launch
/// tables allow (one for most optimizer steps). The 4 KB table is used
/// unless the large one needs fewer launches.
template <class Kernel>
void run_foreach(const Kernel& kernel, const ListTable& table, const std::vector<std::int64_t>& sizes, Device device) {
  static_assert(std::is_trivially_copyable_v<Kernel>,
                "weft: a foreach kernel is copied to the GPU byte for byte, so every evaluator must be "
                "trivially copyable (raw pointers, strides and numbers only)");
  using Small = SmallForeachArgs<Kernel>;
  using Large = LargeForeachArgs<Kernel>;
  static_assert(Small::fits || Large::fits,
                "weft: this foreach kernel's argument leaves no room for a launch table within CUDA's "
                "kernel-parameter limit; split the fuse() into fewer statements");
  std::int64_t total = 0;
  for (std::int64_t n : sizes) total += n;
  if (total == 0) return;
  CudaDeviceGuard guard(device.index());
  constexpr int V = vector_width_v<Kernel>;
  const std::int64_t unit = std::int64_t(kBlockThreads) * V;
  const std::int64_t sms = device_properties(device.index()).multiProcessorCount;
  const std::vector<char> vector = vector_tensors(table, sizes.size(), V);

  // Plans with the 4 KB table, and with the large one where the device takes
  // it; the large one runs only when it needs fewer launches.
  ForeachLaunchPlan small, large;
  if constexpr (Small::fits) {
    small = plan_foreach_launches<typename Small::Launch>(table, sizes, unit,
                                                       sms * foreach_blocks_per_sm<Small>(device.index()));
    small.arg_bytes = sizeof(Small);
    small.arg_limit = Small::arg_bytes;
  }
  bool use_large = false;
  if constexpr (has_large_table_v<Kernel>) {
    if (large_kernel_arguments(device.index())) {
      large = plan_foreach_launches<typename Large::Launch>(table, sizes, unit,
                                                         sms * foreach_blocks_per_sm<Large>(device.index()));
      large.arg_bytes = sizeof(Large);
      large.arg_limit = Large::arg_bytes;
      use_large = !Small::fits || large.launches < small.launches;
    }
  }
  if (!Small::fits && !use_large)
    fail("foreach", "this kernel's operands leave no room for a launch table in 4 KB of kernel arguments, and "
         "cuda:", device.index(), " takes no more (that needs CUDA 12.1 or newer, driver included, and a Volta or "
         "newer GPU); split the fuse() into fewer statements");
  const ForeachLaunchPlan& plan = use_large ? large : small;
  if (log_enabled(LogComponent::foreach))
    log_message(LogComponent::foreach, LogLevel::info, "foreach on cuda:", device.index(), ": ",
        format_list_plan(plan, sizes.size(), int(table.pointers.size()), int(table.numbers.size()),
                         list_operands<Kernel>::lists, list_operands<Kernel>::numbers,
                         use_large ? Large::Capacity::kTensors : Small::Capacity::kTensors, sizeof(Kernel)));
  if constexpr (has_large_table_v<Kernel>) {
    if (use_large) return launch_foreach_plan<Large>(kernel, table, sizes, vector, plan, device);
  }
  if constexpr (Small::fits) launch_foreach_plan<Small>(kernel, table, sizes, vector, plan, device);
}

}  // namespace weft::detail::cuda

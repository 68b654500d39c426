// SPDX-License-Identifier: MIT
/// @file The CUDA executor for pointwise kernels: one __global__ template per kernel type, grid-stride over 16-byte vectors or strided elements (nvcc only).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "weft/backend/cuda/pointwise_thread.hpp"
#include "weft/backend/cuda/runtime.cuh"
#include "weft/core/device.hpp"
#include "weft/log/log.hpp"
#include "weft/plan/iteration.hpp"
#include "weft/plan/kernel.hpp"

namespace weft::detail::cuda {

/// The one __global__ template: instantiated per kernel type, vector width
/// (1: scalar) and index type; the kernel object is its argument, by value.
template <class Kernel, int V, class Index>
__global__ void __launch_bounds__(kBlockThreads) pointwise_kernel(Kernel kernel, RowGeometry rows, Index n) {
  const Index start = Index(blockIdx.x) * Index(blockDim.x) + Index(threadIdx.x);
  const Index step = Index(gridDim.x) * Index(blockDim.x);
  run_thread<V>(kernel, rows, n, start, step);
}

/// Resident blocks of one kernel instantiation per SM of `device` (the
/// current device), from the occupancy calculator; queried once per
/// instantiation and device.
template <class Kernel, int V, class Index>
int resident_blocks_per_sm(int device) {
  static std::atomic<int> cache[kCachedDevices];
  return resident_blocks(reinterpret_cast<const void*>(&pointwise_kernel<Kernel, V, Index>), kBlockThreads, cache,
                         device, "cudaOccupancyMaxActiveBlocksPerMultiprocessor (pointwise kernel)");
}

/// How one kernel is launched over one iteration space.
struct LaunchPlan {
  int grid = 1;                         // blocks of kBlockThreads threads
  int sms = 0;                          // the device's SM count
  int blocks_per_sm = 0;                // resident blocks per SM (occupancy)
  int vector = 1;                       // elements per access (1: scalar kernel)
  bool linear = true;                   // layout
  bool index32 = false;                 // 32-bit element index math
  std::int64_t numel = 0;
  std::int64_t elements_per_thread = 0;  // most any thread runs
};

/// Largest space that the 32-bit index kernels handle (see pointwise_kernel).
inline constexpr std::int64_t kMaxIndex32 = std::numeric_limits<std::int32_t>::max();

/// Chooses vector width, index type and grid for `kernel` over `space`;
/// `device` must be current. The grid is as many blocks as the device holds at
/// once (SMs x resident blocks), fewer when there is less work: each thread
/// then loops over several vectors, and no block waits for a second wave.
template <class Kernel>
LaunchPlan plan_launch(const Kernel& kernel, const IterationSpace& space, Device device) {
  constexpr int V = vector_width_v<Kernel>;
  LaunchPlan plan;
  plan.linear = pointwise_layout<Kernel>::linear;
  plan.numel = space.numel;
  plan.sms = device_properties(device.index()).multiProcessorCount;
  if constexpr (pointwise_layout<Kernel>::linear) {
    plan.vector = kernel.template vec_aligned<V>() ? V : 1;
    plan.blocks_per_sm = plan.vector > 1 ? resident_blocks_per_sm<Kernel, V, std::uint64_t>(device.index())
                                         : resident_blocks_per_sm<Kernel, 1, std::uint64_t>(device.index());
  } else {
    plan.index32 = space.numel <= kMaxIndex32;
    plan.blocks_per_sm = plan.index32 ? resident_blocks_per_sm<Kernel, 1, std::uint32_t>(device.index())
                                      : resident_blocks_per_sm<Kernel, 1, std::uint64_t>(device.index());
  }
  const std::int64_t items = (space.numel + plan.vector - 1) / plan.vector;  // vectors, or elements
  const std::int64_t blocks = (items + kBlockThreads - 1) / kBlockThreads;
  plan.grid = int(std::clamp<std::int64_t>(blocks, 1, std::int64_t(plan.sms) * plan.blocks_per_sm));
  const std::int64_t threads = std::int64_t(plan.grid) * kBlockThreads;
  plan.elements_per_thread = (items + threads - 1) / threads * plan.vector;
  return plan;
}

[[gnu::cold]] inline std::string format_launch(const LaunchPlan& plan, std::size_t element_bytes) {
  std::string access =
      !plan.linear       ? cat("strided, ", plan.index32 ? "32" : "64", "-bit index math")
      : plan.vector > 1 ? cat(plan.vector * element_bytes, "-byte vectors")
                        : std::string("scalar accesses (an operand is not aligned to a 16-byte vector)");
  return cat("grid ", plan.grid, " x ", kBlockThreads, " threads, ", plan.elements_per_thread, " element",
             plan.elements_per_thread == 1 ? "" : "s", "/thread, ", access);
}

/// The launch of `kernel` over `space`, e.g. "grid 528 x 256 threads,
/// 4 elements/thread, 16-byte vectors". Queries the device (occupancy).
template <class Kernel>
std::string describe_launch(const Kernel& kernel, const IterationSpace& space, Device device) {
  CudaDeviceGuard guard(device.index());
  return format_launch(plan_launch(kernel, space, device), Kernel::kElementBytes);
}

/// What is known of a launch before its kernel is built: block size, layout
/// and index width. The grid and the vector width depend on the kernel's
/// occupancy and its operands' alignment; WEFT_LOGS=cuda prints them per
/// launch, and describe_launch(kernel, space, device) returns them.
[[gnu::cold]] inline std::string describe_launch(const IterationSpace& space, Device) {
  if (space.linear)
    return cat("grid-stride x ", kBlockThreads, " threads, 16-byte vectors when every operand is aligned");
  return cat("grid-stride x ", kBlockThreads, " threads, strided rows, ", space.numel <= kMaxIndex32 ? "32" : "64",
             "-bit index math");
}

/// Launches the instantiation the plan picked, on the legacy default stream
/// (stream 0). Asynchronous: copies to the host (cudaMemcpy) synchronize.
template <class Kernel>
void launch(const Kernel& kernel, const LaunchPlan& plan, const RowGeometry& rows) {
  constexpr int V = vector_width_v<Kernel>;
  const dim3 grid{unsigned(plan.grid)}, block{unsigned(kBlockThreads)};
  if constexpr (pointwise_layout<Kernel>::linear) {
    const auto n = std::uint64_t(plan.numel);
    if (plan.vector > 1) pointwise_kernel<Kernel, V, std::uint64_t><<<grid, block, 0, 0>>>(kernel, rows, n);
    else pointwise_kernel<Kernel, 1, std::uint64_t><<<grid, block, 0, 0>>>(kernel, rows, n);
  } else {
    if (plan.index32)
      pointwise_kernel<Kernel, 1, std::uint32_t><<<grid, block, 0, 0>>>(kernel, rows, std::uint32_t(plan.numel));
    else pointwise_kernel<Kernel, 1, std::uint64_t><<<grid, block, 0, 0>>>(kernel, rows, std::uint64_t(plan.numel));
  }
}

/// Every instantiation launch() can pick, for nvcc's device pass (compile_kernels).
template <class Kernel>
void compile_pointwise_kernels() {
  if constexpr (pointwise_layout<Kernel>::linear)
    compile_kernels(pointwise_kernel<Kernel, vector_width_v<Kernel>, std::uint64_t>,
                    pointwise_kernel<Kernel, 1, std::uint64_t>);
  else compile_kernels(pointwise_kernel<Kernel, 1, std::uint32_t>, pointwise_kernel<Kernel, 1, std::uint64_t>);
}

/// Runs `kernel` over every element of `space` on `device`: one launch.
template <class Kernel>
void run_pointwise(const Kernel& kernel, const IterationSpace& space, Device device) {
  static_assert(std::is_trivially_copyable_v<Kernel>,
                "weft: a pointwise kernel is copied to the GPU byte for byte, so every evaluator must be "
                "trivially copyable (raw pointers, strides and numbers only)");
  static_assert(sizeof(Kernel) + sizeof(RowGeometry) + sizeof(std::uint64_t) <= kKernelArgBytes,
                "weft: this fused kernel's argument (its tensors' pointers and strides) exceeds CUDA's 4 KB "
                "kernel-parameter limit; split the fuse() into fewer statements, or read fewer distinct "
                "tensors per kernel (a strided operand takes 96 bytes, a contiguous one 40)");
  if (space.numel == 0) return;
  CudaDeviceGuard guard(device.index());
  const LaunchPlan plan = plan_launch(kernel, space, device);
  const RowGeometry rows = row_geometry(space);
  if (log_enabled(LogComponent::cuda))
    log_write(LogComponent::cuda, cat("pointwise on cuda:", device.index(), ": ", space.numel, " elements, ",
                                      format_launch(plan, Kernel::kElementBytes), " (", plan.sms, " SMs x ",
                                      plan.blocks_per_sm, " resident blocks)"));
  launch(kernel, plan, rows);
  check_cuda(cudaGetLastError(), "pointwise kernel launch");
}

}  // namespace weft::detail::cuda

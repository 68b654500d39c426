// SPDX-License-Identifier: MIT
/// @file The CUDA executor for statements of different shapes: one __global__ template per kernel type, ONE launch whose blocks a launch table shares among the statements (nvcc only).
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "weft/backend/cuda/multi_shape_block.hpp"
#include "weft/backend/cuda/pointwise.cuh"
#include "weft/backend/cuda/runtime.cuh"
#include "weft/core/device.hpp"
#include "weft/log/log.hpp"

namespace weft::detail::cuda {

/// The one __global__ template of multi-shape kernels, per kernel type and index type.
/// __grid_constant__: the kernels and the table stay in parameter space.
template <class Kernel, class Index>
__global__ void __launch_bounds__(kBlockThreads) multi_shape_kernel(const __grid_constant__ MultiShapeArgs<Kernel> args) {
  run_multi_shape_block<Index>(args.kernel, args.launch, blockIdx.x, threadIdx.x, kBlockThreads);
}

/// Every instantiation run_multi_shape can launch, for nvcc's device pass (compile_kernels).
template <class Kernel>
void compile_multi_shape_kernels() {
  compile_kernels(multi_shape_kernel<Kernel, std::uint32_t>, multi_shape_kernel<Kernel, std::uint64_t>);
}

/// Runs statement s of `kernel` over spaces[s], for every s, in one launch on `device`: as many
/// blocks as the device holds at once (fewer when there is less work), shared among the statements
/// in proportion to their elements (share_blocks).
template <class Kernel>
void run_multi_shape(const Kernel& kernel, const std::vector<IterationSpace>& spaces, Device device) {
  static_assert(std::is_trivially_copyable_v<Kernel>,
                "weft: a multi-shape kernel is copied to the GPU byte for byte, so every evaluator must be "
                "trivially copyable (raw pointers, strides and numbers only)");
  static_assert(sizeof(MultiShapeArgs<Kernel>) <= kKernelArgBytes,
                "weft: this fused kernel's argument (its statements' pointers, strides and extents) exceeds "
                "CUDA's 4 KB kernel-parameter limit; split the fuse() or cat() into fewer statements");
  CudaDeviceGuard guard(device.index());
  auto args = std::make_unique<MultiShapeArgs<Kernel>>(MultiShapeArgs<Kernel>{kernel, {}});
  bool index32 = true;
  for (int s = 0; s < Kernel::kStatements; ++s) {
    args->launch.rows[s] = row_geometry(spaces[std::size_t(s)]);
    args->launch.numel[s] = spaces[std::size_t(s)].numel;
    index32 = index32 && spaces[std::size_t(s)].numel <= kMaxIndex32;
  }
  static std::atomic<int> cache32[kCachedDevices], cache64[kCachedDevices];
  const void* entry = index32 ? reinterpret_cast<const void*>(&multi_shape_kernel<Kernel, std::uint32_t>)
                              : reinterpret_cast<const void*>(&multi_shape_kernel<Kernel, std::uint64_t>);
  const int per_sm = resident_blocks(entry, kBlockThreads, index32 ? cache32 : cache64, device.index(),
                                     "cudaOccupancyMaxActiveBlocksPerMultiprocessor (multi-shape kernel)");
  const std::int64_t sms = device_properties(device.index()).multiProcessorCount;
  const int grid = share_blocks(args->launch, kBlockThreads, sms * per_sm);
  if (grid == 0) return;
  if (log_enabled(LogComponent::cuda))
    log_write(LogComponent::cuda, cat("multi-shape on cuda:", device.index(), ": ", Kernel::kStatements,
                                      " statements, grid ", grid, " x ", kBlockThreads, " threads, ",
                                      index32 ? "32" : "64", "-bit index math, argument ", sizeof(*args), " bytes"));
  if (index32) multi_shape_kernel<Kernel, std::uint32_t><<<dim3(unsigned(grid)), dim3(unsigned(kBlockThreads)), 0, 0>>>(*args);
  else multi_shape_kernel<Kernel, std::uint64_t><<<dim3(unsigned(grid)), dim3(unsigned(kBlockThreads)), 0, 0>>>(*args);
  check_cuda(cudaGetLastError(), "multi-shape kernel launch");
}

}  // namespace weft::detail::cuda

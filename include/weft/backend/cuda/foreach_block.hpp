// SPDX-License-Identifier: MIT
/// @file What one block of a CUDA foreach kernel runs (run_foreach_block), and the types of its
/// launch tables. Plain C++ (host-device): backend/cuda/foreach.cuh's __global__ template calls it on the
/// GPU, and tests run it on the host, block by block, with any C++ compiler (the CUDA headers
/// only give CUDART_VERSION, which decides the large table's size).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "weft/backend/cuda/pointwise_thread.hpp"
#include "weft/core/config.hpp"
#include "weft/plan/foreach_launch.hpp"

namespace weft::detail::cuda {

/// The kernel-argument limit of the large launch table. CUDA 12.1 raised the
/// limit from 4096 to 32764 bytes for Volta (sm_70) and newer when the driver
/// is 12.1 or newer too. Decided at compile time from the runtime's version,
/// since the host and device passes must agree on the argument's type; a
/// build for pre-Volta targets with CUDA >= 12.1 must define
/// WEFT_CUDA_KERNEL_ARG_BYTES=4096 (nvcc rejects the larger argument there).
/// At run time the large table is used only where the driver and the device
/// allow it (large_kernel_arguments), and only when it saves launches.
#if defined(WEFT_CUDA_KERNEL_ARG_BYTES)
inline constexpr std::size_t kLargeKernelArgBytes = WEFT_CUDA_KERNEL_ARG_BYTES;
#elif CUDART_VERSION >= 12010
inline constexpr std::size_t kLargeKernelArgBytes = 32764;
#else
inline constexpr std::size_t kLargeKernelArgBytes = kKernelArgBytes;
#endif

/// The two launch tables of a foreach kernel: one within the classic 4 KB
/// limit (a small list costs a 4 KB argument per launch, not 32 KB) and one
/// at kLargeKernelArgBytes.
template <class Kernel>
using SmallForeachArgs = ForeachLaunchArgs<Kernel, kKernelArgBytes>;
template <class Kernel>
using LargeForeachArgs = ForeachLaunchArgs<Kernel, kLargeKernelArgBytes>;

/// Whether a foreach kernel has the large table besides the small one: it
/// fits, and this CUDA takes more than 4 KB.
template <class Kernel>
inline constexpr bool has_large_table_v =
    LargeForeachArgs<Kernel>::fits && LargeForeachArgs<Kernel>::arg_bytes > SmallForeachArgs<Kernel>::arg_bytes;

/// What one block of a foreach launch runs: chunk block_chunk[block] of local
/// tensor block_tensor[block]. select() points the kernel's list operands at
/// that tensor's members (reading the table in parameter space), then the
/// block's threads walk the chunk, V elements per access when every member
/// of the tensor is aligned to V elements (16-byte vectors of the widest
/// operand; the tensor's last n % V elements one by one), else one by one.
/// Chunks are multiples of V, so every vector starts aligned. Offsets within
/// a chunk are 32-bit (chunk <= 2^30). Host-device: the tests run it on the
/// host for every block of every launch.
template <int V, class Kernel, class Launch>
WEFT_HOST_DEVICE void run_foreach_block(const Kernel& kernel, const Launch& launch, std::uint32_t block,
                                     std::uint32_t thread, std::uint32_t threads) {
  const int k = launch.block_tensor[block];
  const std::int64_t begin = std::int64_t(launch.block_chunk[block]) * launch.chunk;
  const std::uint32_t n = std::uint32_t(std::min(launch.chunk, launch.size(k) - begin));
  Kernel local = kernel;
  local.select(k, launch);
  std::uint32_t scalars_from = 0;
  if (V > 1 && launch.vector_aligned(k)) {
    const std::uint32_t vectors = n / V;
    for (std::uint32_t i = thread; i < vectors; i += threads) local.template run_vector<LaneTarget, V>(begin + std::int64_t(i) * V, false);
    scalars_from = vectors * V;
  }
  for (std::uint32_t i = scalars_from + thread; i < n; i += threads) local.run_scalar(begin + i);
}

/// Per tensor: whether every list member is aligned to V elements (see run_foreach_block).
inline std::vector<char> vector_tensors(const ListTable& table, std::size_t tensors, int V) {
  std::vector<char> vector(tensors);
  for (std::size_t k = 0; k < tensors; ++k) vector[k] = V > 1 && list_vector_aligned(table, k, V);
  return vector;
}

}  // namespace weft::detail::cuda

// SPDX-License-Identifier: MIT
/// @file CUDA runtime helpers: error checks, device properties, streams (nvcc only).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include "weft/core/cuda_device.hpp"
#include "weft/core/error.hpp"

namespace weft::detail {

/// Cached per-device properties (queried once; the launch layer sizes grids from them).
inline const cudaDeviceProp& device_properties(int device) {
  static std::mutex mutex;
  static std::vector<cudaDeviceProp> props;
  static std::vector<bool> known;
  std::lock_guard<std::mutex> lock(mutex);
  if (device >= int(props.size())) {
    props.resize(device + 1);
    known.resize(device + 1, false);
  }
  if (!known[device]) {
    check_cuda(cudaGetDeviceProperties(&props[device], device), "cudaGetDeviceProperties");
    known[device] = true;
  }
  return props[device];
}

/// Devices whose occupancy is cached without a lock (index below this).
inline constexpr int kCachedDevices = 64;

/// Resident blocks per SM of `kernel` (blocks of `threads`) on `device`, the
/// current device, from the occupancy calculator; at least 1. `cache` holds
/// this kernel's answer per device (kCachedDevices slots, 0: not asked yet):
/// each kernel instantiation owns one, so the query runs once per device.
inline int resident_blocks(const void* kernel, int threads, std::atomic<int>* cache, int device,
                           const char* what) {
  const bool cached = device >= 0 && device < kCachedDevices;
  if (cached) {
    if (int blocks = cache[device].load(std::memory_order_relaxed); blocks > 0) return blocks;
  }
  int blocks = 0;
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, 0), what);
  blocks = std::max(blocks, 1);
  if (cached) cache[device].store(blocks, std::memory_order_relaxed);
  return blocks;
}

/// Names __global__ instantiations so that nvcc's device pass compiles them.
/// The pointwise and foreach launchers replace their body there with the list
/// of kernels they can launch: the device pass emits no host code, yet it
/// instantiates every template the host code uses, and building a kernel
/// object (its evaluators) and its launch plan was most of cicc's time
/// (docs/benchmarks.md, "nvcc's device pass"). The host pass must launch no
/// instantiation that is not named: scripts/check-cuda-kernels checks every
/// nvcc object of the release build.
template <class... Kernels>
void compile_kernels(Kernels*...) {}

/// Number of CUDA devices, 0 when there is no driver or no device.
inline int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" status
    return 0;
  }
  return n;
}

}  // namespace weft::detail

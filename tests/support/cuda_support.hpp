// SPDX-License-Identifier: MIT
/// @file Helpers for the cuda suite: whether a GPU is present, poisoning storage, raw copies back to the host.
#pragma once

#if !defined(__CUDACC__)
#error "cuda_support.hpp is for test files compiled by nvcc (.cu)"
#endif

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include <weft/core/factories.hpp>

namespace weft::test {

/// True when a CUDA device is usable. Cached: doctest evaluates skip
/// decorators while registering test cases, before main.
inline bool cuda_available() {
  static const bool available = weft::detail::cuda_device_count() > 0;
  return available;
}

/// The byte a destination's storage is filled with before a kernel runs: all
/// ones is a NaN in every floating dtype (float, double, half, bfloat16); the
/// integers get 0xA5..., far from any value the tests compute, and 0xA5 is no
/// valid bool (a written bool is 0 or 1).
template <class T>
constexpr unsigned char poison_byte() {
  return is_floating_v<T> ? 0xFF : 0xA5;
}

/// Fills the whole storage under `t` (not only its view) with poison_byte<T>().
template <class T>
void poison(const Tensor<T>& t) {
  if (t.device().is_cpu()) {
    std::memset(t.storage()->data(), poison_byte<T>(), t.storage()->bytes());
    return;
  }
  weft::detail::CudaDeviceGuard guard(t.device().index());
  weft::detail::check_cuda(cudaMemset(t.storage()->data(), poison_byte<T>(), t.storage()->bytes()), "cudaMemset");
}

/// Every byte of the storage under `t`, on the host; from a CUDA tensor with
/// cudaMemcpy (independent of weft's own copy and kernel paths).
template <class T>
std::vector<unsigned char> storage_bytes(const Tensor<T>& t) {
  std::vector<unsigned char> bytes(t.storage()->bytes());
  if (bytes.empty()) return bytes;
  if (t.device().is_cpu()) {
    std::memcpy(bytes.data(), t.storage()->data(), bytes.size());
    return bytes;
  }
  weft::detail::CudaDeviceGuard guard(t.device().index());
  weft::detail::check_cuda(cudaMemcpy(bytes.data(), t.storage()->data(), bytes.size(), cudaMemcpyDeviceToHost),
                           "cudaMemcpy");
  return bytes;
}

/// Element `offset` (in elements, from the storage start) of a downloaded storage.
template <class T>
T element_at(const std::vector<unsigned char>& bytes, std::int64_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset * std::int64_t(sizeof(T)), sizeof(T));
  return value;
}

}  // namespace weft::test

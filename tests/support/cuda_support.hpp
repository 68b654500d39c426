// SPDX-License-Identifier: MIT
/// @file Helpers for the cuda suite: whether a GPU is present, poisoning storage, raw copies back to the host.
/// Its host-only files (.cpp: CUDA thread and block loops run on the host) use the CPU half.
#pragma once

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#endif

#include <cstdint>
#include <cstring>
#include <vector>

#include <weft/ops/factories.hpp>
#include <weft/ops/fuse.hpp>

namespace weft::test {

#if defined(__CUDACC__)
/// True when a CUDA device is usable. Cached: doctest evaluates skip
/// decorators while registering test cases, before main.
inline bool cuda_available() {
  static const bool available = weft::detail::cuda_device_count() > 0;
  return available;
}
#endif

/// The executor of test bodies that run statements on CUDA tensors as one kernel (weft::fuse);
/// the bodies take it as a parameter, so that the same body also runs on a host emulation of the
/// kernel (EmulatedOnHost in the suite's .cpp files).
inline namespace WEFT_BACKEND_ABI {  // run() launches (docs/architecture.md, ODR safety)
struct OnCuda {
  static Device device() { return Device::cuda(); }
  template <class... Stmts>
  static void run(Stmts... stmts) {
    weft::fuse(stmts...);
  }
};
}  // namespace WEFT_BACKEND_ABI

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
void poison(const weft::TensorBase<T>& t) {
  if (t.device().is_cpu()) {
    std::memset(t.storage()->data(), poison_byte<T>(), t.storage()->bytes());
    return;
  }
#if defined(__CUDACC__)
  weft::detail::CudaDeviceGuard guard(t.device().index());
  weft::detail::check_cuda(cudaMemset(t.storage()->data(), poison_byte<T>(), t.storage()->bytes()), "cudaMemset");
#else
  weft::detail::fail("test::poison", "a CUDA tensor in a file not compiled by nvcc");
#endif
}

/// Every byte of the storage under `t`, on the host; from a CUDA tensor with
/// cudaMemcpy (independent of weft's own copy and kernel paths).
template <class T>
std::vector<unsigned char> storage_bytes(const weft::TensorBase<T>& t) {
  std::vector<unsigned char> bytes(t.storage()->bytes());
  if (bytes.empty()) return bytes;
  if (t.device().is_cpu()) {
    std::memcpy(bytes.data(), t.storage()->data(), bytes.size());
    return bytes;
  }
#if defined(__CUDACC__)
  weft::detail::CudaDeviceGuard guard(t.device().index());
  weft::detail::check_cuda(cudaMemcpy(bytes.data(), t.storage()->data(), bytes.size(), cudaMemcpyDeviceToHost),
                           "cudaMemcpy");
  return bytes;
#else
  weft::detail::fail("test::storage_bytes", "a CUDA tensor in a file not compiled by nvcc");
#endif
}

/// Element `offset` (in elements, from the storage start) of a downloaded storage.
template <class T>
T element_at(const std::vector<unsigned char>& bytes, std::int64_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset * std::int64_t(sizeof(T)), sizeof(T));
  return value;
}

/// Elements of a downloaded storage that a kernel must not have written (covered[i] == 0) but whose
/// bytes differ from `outside` (the storage before the kernel) or, without it, from the poison.
template <class T>
std::int64_t count_touched(const std::vector<unsigned char>& bytes, const std::vector<char>& covered,
                           const std::vector<unsigned char>* outside) {
  std::int64_t touched = 0;
  for (std::size_t i = 0; i < covered.size(); ++i) {
    if (covered[i]) continue;
    for (std::size_t b = i * sizeof(T); b < (i + 1) * sizeof(T); ++b) {
      if (bytes[b] != (outside ? (*outside)[b] : poison_byte<T>())) {
        ++touched;
        break;
      }
    }
  }
  return touched;
}

}  // namespace weft::test

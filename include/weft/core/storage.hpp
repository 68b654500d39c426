// SPDX-License-Identifier: MIT
/// @file Storage: a reference-counted byte buffer on one device, plus byte copies between devices and byte fills.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "weft/core/config.hpp"
#include "weft/core/device.hpp"
#include "weft/core/error.hpp"
#include "weft/core/host_memory.hpp"

#if defined(__CUDACC__)
#include "weft/core/cuda_device.hpp"
#endif

namespace weft {

/// One allocation that tensors and views share through a shared_ptr. It frees its bytes with
/// `release` when the last handle dies; with no `release` it borrows memory weft does not own
/// (detail::borrow: from_blob, from_dlpack, from_eigen).
class Storage {
 public:
  using Release = void (*)(void* data, std::size_t bytes, Device);
  Storage(void* data, std::size_t bytes, Device device, Release release)
      : data_(data), bytes_(bytes), device_(device), release_(release) {}
  ~Storage() {
    if (release_ && data_) release_(data_, bytes_, device_);
  }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  Device device() const { return device_; }

  /// How many statements have written these bytes (torch's version counter): autograd remembers it
  /// for each tensor it saves and refuses a backward after the tensor was modified in place.
  /// weft::fuse and the assignment operators count a write (ops/fuse.hpp).
  std::uint64_t version() const { return version_.load(std::memory_order_relaxed); }
  void count_write() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  void* data_;
  std::size_t bytes_;
  Device device_;
  Release release_;
  std::atomic<std::uint64_t> version_{0};
};

namespace detail {

/// What tensors allocated and copied: the numbers a test reads to prove that an operation copied
/// none of its inputs and allocated only its outputs. One relaxed atomic add per allocation or
/// copy (allocate below; Tensor copies, clone(), contiguous() of a strided view and to()).
struct TensorCounters {
  std::atomic<std::int64_t> allocations{0};
  std::atomic<std::int64_t> copies{0};
  std::atomic<std::int64_t> elements_copied{0};
};
inline TensorCounters& tensor_counters() {
  static TensorCounters counters;
  return counters;
}
inline void count_copy(std::int64_t elements) {
  tensor_counters().copies.fetch_add(1, std::memory_order_relaxed);
  tensor_counters().elements_copied.fetch_add(elements, std::memory_order_relaxed);
}

inline void release_host(void* p, std::size_t bytes, Device) { release_host_buffer(p, bytes); }

inline namespace WEFT_BACKEND_ABI {

#if defined(__CUDACC__)
inline void release_cuda(void* p, std::size_t, Device d) {
  CudaDeviceGuard guard(d.index());
  cudaFree(p);
}
#endif

[[noreturn]] inline void fail_no_cuda(const char* op) {
  fail(op, "a CUDA tensor is used from a translation unit not compiled with nvcc; compile this file "
           "as CUDA (.cu, with the weft CUDA dependency) or keep the tensor on Device::cpu()");
}

/// Whether nvcc compiles this translation unit: only then can its kernels run on CUDA tensors.
inline constexpr bool kCudaCompiled =
#if defined(__CUDACC__)
    true;
#else
    false;
#endif

/// Whether this translation unit runs kernels on `device`: the CPU always, CUDA where nvcc compiles it.
inline bool device_compiled(Device device) { return kCudaCompiled || !device.is_cuda(); }

/// fail_no_cuda for a device this translation unit cannot run kernels on; nothing otherwise.
inline void check_device_compiled(const char* op, Device device) {
  if (!device_compiled(device)) fail_no_cuda(op);
}

inline std::shared_ptr<Storage> allocate(std::size_t bytes, Device device) {
  tensor_counters().allocations.fetch_add(1, std::memory_order_relaxed);
  if (device.is_cpu()) {
    void* p = allocate_host_buffer(bytes);
    if (bytes && !p) fail("empty", "cannot allocate ", bytes, " bytes on the host");
    return std::make_shared<Storage>(p, bytes, device, &release_host);
  }
#if defined(__CUDACC__)
  CudaDeviceGuard guard(device.index());
  void* p = nullptr;
  if (bytes) check_cuda(cudaMalloc(&p, bytes), "cudaMalloc");
  return std::make_shared<Storage>(p, bytes, device, &release_cuda);
#else
  fail_no_cuda("empty");
#endif
}

}  // namespace WEFT_BACKEND_ABI

/// A Storage over `bytes` bytes at `data` that weft does not own (no allocation is counted):
/// `on_release(data)` runs once when the last handle dies, which is exactly when shared_ptr
/// calls its deleter, so the deleter lives there and Storage needs no second way to free.
/// `on_release` must not throw.
template <class F>
std::shared_ptr<Storage> borrow(void* data, std::size_t bytes, Device device, F on_release) {
  return std::shared_ptr<Storage>(new Storage(data, bytes, device, nullptr),
                                  [on_release = std::move(on_release)](Storage* s) noexcept {
                                    void* p = s->data();
                                    delete s;
                                    on_release(p);
                                  });
}

inline namespace WEFT_BACKEND_ABI {

/// Copies `bytes` contiguous bytes between any two devices (synchronous).
inline void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, std::size_t bytes) {
  if (bytes == 0) return;
  if (dst_device.is_cpu() && src_device.is_cpu()) {
    std::memcpy(dst, src, bytes);
    return;
  }
#if defined(__CUDACC__)
  cudaMemcpyKind kind = dst_device.is_cpu()   ? cudaMemcpyDeviceToHost
                        : src_device.is_cpu() ? cudaMemcpyHostToDevice
                                              : cudaMemcpyDeviceToDevice;
  check_cuda(cudaMemcpy(dst, src, bytes, kind), "cudaMemcpy");
#else
  fail_no_cuda("to");
#endif
}

/// Writes `count` copies of the `element_bytes`-long `value` to the contiguous memory at `dst`.
/// Untyped, for fills outside kernels (an empty reduction's outputs): one function for every
/// dtype instead of a pointwise kernel per dtype. A device destination is filled through a host
/// buffer and one copy: meant for rare, small fills.
inline void fill_bytes(void* dst, Device device, const void* value, std::size_t element_bytes, std::size_t count) {
  if (count == 0) return;
  if (device.is_cpu()) {
    for (std::size_t i = 0; i < count; ++i) std::memcpy(static_cast<char*>(dst) + i * element_bytes, value, element_bytes);
    return;
  }
  std::unique_ptr<char[]> host(new char[count * element_bytes]);
  fill_bytes(host.get(), Device::cpu(), value, element_bytes, count);
  copy_bytes(dst, device, host.get(), Device::cpu(), count * element_bytes);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail
}  // namespace weft

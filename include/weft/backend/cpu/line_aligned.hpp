// SPDX-License-Identifier: MIT
/// @file Scratch vectors whose elements start on a 64-byte cache line, for kernels that load and store whole lines (AMX tile rows, 512-bit vectors).
///
/// glibc's malloc returns 16-byte aligned blocks (large ones 16 bytes past a page boundary), so
/// a std::vector's 64-byte rows straddle two cache lines: every AMX tile row and every 512-bit
/// load or store then touches two lines. Measured on Sapphire Rapids (bench/amx_tiles, one
/// thread): a 32 x 256 x 128 bfloat16 q k^T in 2 x 2 tile blocks took 19.4 ns per TDPBF16PS with
/// its buffers 16 bytes off a line and 9.0 ns on lines.
#pragma once

#include <cstddef>
#include <new>
#include <utility>
#include <vector>

namespace weft::detail::cpu {

inline constexpr std::size_t kCacheLine = 64;

/// std::allocator's contract, with blocks aligned to kCacheLine.
template <class T>
struct LineAllocator {
  using value_type = T;
  LineAllocator() = default;
  template <class U>
  LineAllocator(const LineAllocator<U>&) {}  // NOLINT: rebinding, as std::allocator
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(kCacheLine))); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, std::align_val_t(kCacheLine)); }
  friend bool operator==(const LineAllocator&, const LineAllocator&) { return true; }
};

/// A std::vector whose data() is on a cache line.
template <class T>
using LineVector = std::vector<T, LineAllocator<T>>;

/// LineAllocator whose value-initialization leaves the elements of trivial types uninitialized,
/// for buffers a kernel writes whole before it reads them: a vector(n) of it costs no memset
/// (bf16 attention's packed keys and values: 8 MiB a call at L = S = 2048, 8 heads, E = 128).
template <class T>
struct UninitializedLineAllocator : LineAllocator<T> {
  UninitializedLineAllocator() = default;
  template <class U>
  UninitializedLineAllocator(const UninitializedLineAllocator<U>&) {}  // NOLINT: rebinding
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    if constexpr (sizeof...(Args) == 0) ::new (static_cast<void*>(p)) U;
    else ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

/// A LineVector whose elements start uninitialized.
template <class T>
using LineScratch = std::vector<T, UninitializedLineAllocator<T>>;

}  // namespace weft::detail::cpu

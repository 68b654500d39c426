// SPDX-License-Identifier: MIT
/// @file How weft allocates host buffers: 64-byte aligned, small ones back to back in slabs, large ones kept for reuse (core/host_cache.hpp).
///
/// Why a pool. A list of 10,000 tensors of 100 floats, each from std::aligned_alloc, puts every
/// 400-byte buffer on its own 512 bytes of heap (glibc's chunk header pushes the next 64-byte
/// boundary one line further) with the tensor's shared_ptr control block between two of them:
/// about 9 cache lines of address space for 7 of data. A foreach kernel walks the members in
/// order, the hardware prefetchers fetch the gaps too, and an AdamW step over such a list ran at
/// 0.67x the speed of the same update over one tensor of as many elements. Buffers of up to
/// kPoolMaxBytes bytes therefore come from a size class's slab: classes every 64 bytes, a slab of
/// kPoolSlabBytes carved into equal chunks, so buffers allocated one after another lie back to back
/// (a 400-byte buffer in a 448-byte chunk: 7 lines for 7 lines of data).
///
/// A slab is aligned to its size, so a chunk finds its slab's header by masking its address. Each
/// slab keeps its own free list and a count of chunks handed out; a class lists its slabs that
/// have a free chunk. A slab whose last chunk comes back is returned to the system unless it is
/// the class's only slab with room (so one tensor allocated and freed in a loop does not map and
/// unmap a slab each time): at most one empty slab per class (32 x 64 KiB) is held. One mutex per
/// class: an allocation costs about what malloc's does.
///
/// Under AddressSanitizer every buffer comes from std::aligned_alloc, so that ASan's red zones
/// catch a kernel writing past a small tensor (within a slab, the next chunk is valid memory).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "weft/core/host_cache.hpp"

namespace weft::detail {

/// Host buffers are 64-byte aligned so that every SIMD width can use aligned
/// (and non-temporal) stores on them.
inline constexpr std::size_t kHostAlignment = 64;

/// Buffers of up to this many bytes come from the pool.
inline constexpr std::size_t kPoolMaxBytes = 2048;
/// A slab's bytes, and its alignment. The header takes the first kHostAlignment bytes.
inline constexpr std::size_t kPoolSlabBytes = 64 * 1024;

/// Whether host buffers come from the pool in this build (not under AddressSanitizer).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kHostPoolEnabled = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kHostPoolEnabled = false;
#else
inline constexpr bool kHostPoolEnabled = true;
#endif
#else
inline constexpr bool kHostPoolEnabled = true;
#endif

/// `bytes` rounded up to a multiple of kHostAlignment.
constexpr std::size_t host_rounded(std::size_t bytes) {
  return (bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
}

/// Slabs of equal chunks for buffers of 1 to kPoolMaxBytes bytes (see the file comment).
class HostPool {
 public:
  static constexpr std::size_t kClasses = kPoolMaxBytes / kHostAlignment;

  HostPool() = default;
  HostPool(const HostPool&) = delete;
  HostPool& operator=(const HostPool&) = delete;
  /// Returns every slab to the system: only for a pool whose chunks are all back (a test's own).
  ~HostPool() {
    for (SizeClass& c : classes_)
      while (c.with_room) release_slab(c, c.with_room);
  }

  /// The pool that Storage allocates from. Never destroyed: tensors in static storage may free
  /// their buffers after every other static has been destroyed.
  static HostPool& instance() {
    static HostPool* pool = new HostPool;
    return *pool;
  }

  /// A kHostAlignment-aligned chunk of at least `bytes` (1 to kPoolMaxBytes) bytes; nullptr when
  /// the system has no memory for a new slab.
  void* allocate(std::size_t bytes) {
    SizeClass& c = classes_[host_rounded(bytes) / kHostAlignment - 1];
    std::lock_guard<std::mutex> lock(c.mutex);
    Slab* s = c.with_room;
    if (!s) {
      s = new_slab(c, host_rounded(bytes));
      if (!s) return nullptr;
    }
    void* chunk;
    if (s->free) {
      chunk = s->free;
      s->free = *static_cast<void**>(chunk);
    } else {
      chunk = reinterpret_cast<char*>(s) + kHostAlignment + std::size_t(s->carved++) * s->chunk_bytes;
    }
    if (++s->live == s->capacity) unlink(c, s);
    ++c.chunks;
    return chunk;
  }

  /// Gives back a chunk from allocate().
  void release(void* chunk) {
    Slab* s = slab_of(chunk);
    SizeClass& c = classes_[s->chunk_bytes / kHostAlignment - 1];
    std::lock_guard<std::mutex> lock(c.mutex);
    *static_cast<void**>(chunk) = s->free;
    s->free = chunk;
    if (s->live-- == s->capacity) link_front(c, s);
    --c.chunks;
    if (s->live == 0 && (c.with_room != s || s->next)) release_slab(c, s);
  }

  /// The slabs and the chunks handed out in the size class of `bytes`-byte buffers (tests).
  struct ClassState {
    std::size_t slabs, chunks, chunks_per_slab;
  };
  ClassState state(std::size_t bytes) {
    SizeClass& c = classes_[host_rounded(bytes) / kHostAlignment - 1];
    std::lock_guard<std::mutex> lock(c.mutex);
    return {c.slabs, c.chunks, (kPoolSlabBytes - kHostAlignment) / host_rounded(bytes)};
  }

 private:
  /// A slab's header, in its first kHostAlignment bytes; chunks follow.
  struct Slab {
    Slab* prev;
    Slab* next;  // neighbours in the class's list of slabs with room
    void* free;  // chunks given back, linked through their first bytes
    std::uint32_t live;  // chunks handed out
    std::uint32_t carved;  // chunks taken from the untouched tail so far
    std::uint32_t capacity;
    std::uint32_t chunk_bytes;
  };
  static_assert(sizeof(Slab) <= kHostAlignment);

  struct SizeClass {
    std::mutex mutex;
    Slab* with_room = nullptr;  // slabs with a free chunk, most recently given back to first
    std::size_t slabs = 0, chunks = 0;
  };

  static Slab* slab_of(void* chunk) {
    return reinterpret_cast<Slab*>(reinterpret_cast<std::uintptr_t>(chunk) & ~std::uintptr_t(kPoolSlabBytes - 1));
  }

  static void link_front(SizeClass& c, Slab* s) {
    s->prev = nullptr;
    s->next = c.with_room;
    if (c.with_room) c.with_room->prev = s;
    c.with_room = s;
  }
  static void unlink(SizeClass& c, Slab* s) {
    (s->prev ? s->prev->next : c.with_room) = s->next;
    if (s->next) s->next->prev = s->prev;
  }

  static Slab* new_slab(SizeClass& c, std::size_t chunk_bytes) {
    void* p = std::aligned_alloc(kPoolSlabBytes, kPoolSlabBytes);
    if (!p) return nullptr;
    Slab* s = ::new (p) Slab{nullptr, nullptr, nullptr, 0, 0,
                             std::uint32_t((kPoolSlabBytes - kHostAlignment) / chunk_bytes), std::uint32_t(chunk_bytes)};
    link_front(c, s);
    ++c.slabs;
    return s;
  }
  static void release_slab(SizeClass& c, Slab* s) {
    unlink(c, s);
    --c.slabs;
    std::free(s);
  }

  SizeClass classes_[kClasses];
};

/// A kHostAlignment-aligned host buffer of at least `bytes` bytes (nullptr for 0 bytes or when out
/// of memory), freed by release_host_buffer(p, bytes) with the same `bytes`.
/// Small ones come from the pool, large ones (kHostCacheMinBytes and up) from the buffers that
/// HostBlockCache kept (core/host_cache.hpp), else from the system.
inline void* allocate_host_buffer(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  if (kHostPoolEnabled && bytes <= kPoolMaxBytes) return HostPool::instance().allocate(bytes);
  if (kHostPoolEnabled && bytes >= kHostCacheMinBytes) {
    if (void* kept = HostBlockCache::instance().take(bytes)) return kept;
    return std::aligned_alloc(kHostAlignment, host_cache_rounded(bytes));
  }
  return std::aligned_alloc(kHostAlignment, host_rounded(bytes));
}
inline void release_host_buffer(void* p, std::size_t bytes) {
  if (!p) return;
  if (kHostPoolEnabled && bytes <= kPoolMaxBytes) HostPool::instance().release(p);
  else if (!(kHostPoolEnabled && bytes >= kHostCacheMinBytes && HostBlockCache::instance().keep(p, bytes))) std::free(p);
}

/// A standard allocator over allocate_host_buffer: a vector of it takes large buffers from the host
/// cache's kept ones, so scratch vectors made anew every call (a convolution's packed weights and
/// partial sums, megabytes a layer) do not fault their pages in and have the kernel zero them each
/// time (a ResNet-18 training step spent about 5% of its time so). Its value-initialization leaves
/// elements uninitialized (vector(n), resize(n)), for buffers written whole before they are read:
/// ResNet-50's 512-channel bfloat16 weight, zeroed twice before it was packed, spent 13% of its
/// batch-1 forward in memset. A vector(n, value) or resize(n, value) still fills.
template <class T>
struct HostCacheAllocator {
  using value_type = T;
  HostCacheAllocator() = default;
  template <class U>
  HostCacheAllocator(const HostCacheAllocator<U>&) {}
  T* allocate(std::size_t n) {
    void* p = allocate_host_buffer(n * sizeof(T));
    if (!p && n) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) { release_host_buffer(p, n * sizeof(T)); }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    if constexpr (sizeof...(Args) == 0) ::new (static_cast<void*>(p)) U;
    else ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <class U>
  bool operator==(const HostCacheAllocator<U>&) const {
    return true;
  }
};

/// A std::vector whose storage comes from the host cache (HostCacheAllocator).
template <class T>
using HostVector = std::vector<T, HostCacheAllocator<T>>;

}  // namespace weft::detail

// SPDX-License-Identifier: MIT
/// @file Large host buffers kept for reuse when tensors free them (a caching allocator for the CPU, as PyTorch has for CUDA), and the calls that size and empty the cache.
///
/// Why. glibc hands every block above its mmap threshold (128 KiB to 32 MiB, adapting) to the
/// kernel when it is freed, and a training step frees and reallocates its activations every
/// step: each page then faults in anew and the kernel zeroes it. GPT-2 124M's step at B 4, T 64
/// took about 140,000 page faults a step that way, about a tenth of the step (bench/gpt2). A
/// buffer of at least kHostCacheMinBytes is therefore kept when freed, in a list per size, and
/// the next request of the same rounded size takes it back: activations of a repeated step have
/// the same sizes, so after the first step they come back without a fault.
///
/// Sizes are rounded up to kHostCacheGranule (64 KiB) so that near sizes share a list. The cache
/// holds at most host_cache_limit() bytes (default 1 GiB, weft::set_host_cache_limit): a freed
/// buffer that would pass the limit makes room by sending the longest-kept buffers back to the
/// system, since the sizes a program frees now are those it asks for next (a loop's). Refusing
/// the new buffer instead left a full cache holding an earlier phase's sizes for good: a run over
/// 38 convolution layers ran its last ones 2-3x slower, every call faulting its scratch in anew.
/// A buffer larger than the limit is not kept. weft::empty_host_cache() frees every kept buffer
/// (torch.cuda.empty_cache's role). Kept buffers still count in the process's RSS. Under
/// AddressSanitizer nothing is kept, so that a use after free is still reported.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <iterator>
#include <list>
#include <map>
#include <mutex>

namespace weft::detail {

/// Buffers of at least this many bytes are kept when freed (glibc's initial mmap threshold).
inline constexpr std::size_t kHostCacheMinBytes = std::size_t(128) << 10;
/// Kept buffers' sizes are multiples of this.
inline constexpr std::size_t kHostCacheGranule = std::size_t(64) << 10;

/// `bytes` rounded up to a multiple of kHostCacheGranule.
constexpr std::size_t host_cache_rounded(std::size_t bytes) {
  return (bytes + kHostCacheGranule - 1) / kHostCacheGranule * kHostCacheGranule;
}

/// Freed large buffers by rounded size (see the file comment). Thread-safe: one mutex.
class HostBlockCache {
 public:
  HostBlockCache() = default;
  HostBlockCache(const HostBlockCache&) = delete;
  HostBlockCache& operator=(const HostBlockCache&) = delete;
  ~HostBlockCache() { empty(); }

  /// The cache that host buffers use. Never destroyed: tensors in static storage may free their
  /// buffers after every other static has been destroyed.
  static HostBlockCache& instance() {
    static HostBlockCache* cache = new HostBlockCache;
    return *cache;
  }

  /// A kept buffer of host_cache_rounded(bytes) bytes, or nullptr when none is kept. Of several,
  /// the one kept last: the likeliest still in the CPU's caches. Taking the first kept cycled a
  /// loop through every buffer of its size: a convolution packing a 4 MB weight per call, with
  /// three other 4 MB buffers kept, wrote each call into one gone from L3 (ResNet-50's
  /// 2048-channel 1 x 1 at batch 1: 1.23 ms a call, against 0.77 with its own buffer back).
  void* take(std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto [first, last] = by_size_.equal_range(host_cache_rounded(bytes));
    if (first == last) return nullptr;
    const auto it = std::prev(last);  // equal keys stay in the order they were kept
    void* p = it->second->p;
    forget(it);
    return p;
  }

  /// Keeps p (a buffer of host_cache_rounded(bytes) bytes), the longest-kept buffers freed to
  /// stay within the limit; false (the caller frees it) when p alone passes the limit.
  bool keep(void* p, std::size_t bytes) {
    const std::size_t rounded = host_cache_rounded(bytes);
    std::lock_guard<std::mutex> lock(mutex_);
    const std::size_t limit = limit_.load(std::memory_order_relaxed);
    if (rounded > limit) return false;
    while (kept_bytes_ + rounded > limit) free_oldest();
    age_.push_back(Kept{p, rounded});
    by_size_.emplace(rounded, std::prev(age_.end()));
    kept_bytes_ += rounded;
    return true;
  }

  /// Frees every kept buffer.
  void empty() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Kept& k : age_) std::free(k.p);
    age_.clear();
    by_size_.clear();
    kept_bytes_ = 0;
  }

  std::size_t kept_bytes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return kept_bytes_;
  }
  std::size_t limit() const { return limit_.load(std::memory_order_relaxed); }
  /// A new limit; the longest-kept buffers beyond it are freed now.
  void set_limit(std::size_t bytes) {
    limit_.store(bytes, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(mutex_);
    while (kept_bytes_ > bytes) free_oldest();
  }

 private:
  struct Kept {
    void* p;
    std::size_t bytes;
  };
  using BySize = std::multimap<std::size_t, std::list<Kept>::iterator>;

  /// Drops a kept buffer from both indexes (the caller owns it or frees it).
  void forget(BySize::iterator it) {
    kept_bytes_ -= it->first;
    age_.erase(it->second);
    by_size_.erase(it);
  }
  /// Frees the buffer kept longest.
  void free_oldest() {
    const auto oldest = age_.begin();
    auto it = by_size_.lower_bound(oldest->bytes);
    while (it->second != oldest) ++it;
    std::free(oldest->p);
    forget(it);
  }

  std::mutex mutex_;
  std::list<Kept> age_;  // kept buffers, longest kept first
  BySize by_size_;       // the same, by rounded size
  std::size_t kept_bytes_ = 0;
  std::atomic<std::size_t> limit_{std::size_t(1) << 30};
};

}  // namespace weft::detail

namespace weft {

/// Bytes of freed host buffers weft keeps for reuse (core/host_cache.hpp); 1 GiB by default.
/// 0 keeps none. Lowering it frees kept buffers beyond the new limit at once.
inline void set_host_cache_limit(std::size_t bytes) { detail::HostBlockCache::instance().set_limit(bytes); }
inline std::size_t host_cache_limit() { return detail::HostBlockCache::instance().limit(); }
/// Bytes kept now.
inline std::size_t host_cache_bytes() { return detail::HostBlockCache::instance().kept_bytes(); }
/// Frees every kept buffer (their pages go back to the system).
inline void empty_host_cache() { detail::HostBlockCache::instance().empty(); }

}  // namespace weft

// SPDX-License-Identifier: MIT
/// @file The CPU sort executor: a stable LSD radix sort of each row of a contiguous (outer, n, inner) tensor on its order-preserving keys (backend/sort_keys.hpp), carrying the indices; short rows by a comparison sort of (key, index); OpenMP over rows, or within one long row.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <new>
#include <numeric>
#include <utility>
#include <vector>

#include "weft/backend/cpu/pointwise.hpp"
#include "weft/backend/cpu/thread_chunk.hpp"
#include "weft/backend/sort_keys.hpp"
#include "weft/core/host_memory.hpp"

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu {

/// Rows of keys K shorter than this sort by comparison: a radix pass costs a 256-bucket prefix
/// and sizeof(K) passes over the row whatever its length, which outweighs std::sort's n log n
/// compares of short rows (crossover measured per key width with bench/sort_torch: docs/sort.md).
template <class K>
inline constexpr std::int64_t kRadixMinRow = sizeof(K) == 1 ? 256 : sizeof(K) == 2 ? 512 : 4096;

/// One digit of a radix pass: 8 bits, 256 buckets, sizeof(K) passes.
inline constexpr int kRadixBits = 8;
inline constexpr int kRadixBuckets = 1 << kRadixBits;

template <class K>
inline constexpr int kRadixPasses = int(sizeof(K));

/// Digit `pass` of key - low: the keys of a row minus the row's smallest key order as the keys do,
/// and a row of a narrow range has zeros in the high digits whatever the keys' sign (int32 values
/// in [-100, 100] have keys 0x7fffff9c..0x80000064, every byte varying: 4 passes; less the
/// smallest, 0..200: one pass).
template <class K>
inline int radix_digit(K key, K low, int pass) {
  return int((K(key - low) >> (pass * kRadixBits)) & K(kRadixBuckets - 1));
}

/// `count` uninitialized elements of host memory for the length of a sort (the host allocator keeps
/// large buffers for reuse, so a sort called in a loop does not fault its scratch in each time).
template <class T>
class SortScratch {
 public:
  explicit SortScratch(std::int64_t count) : bytes_(std::size_t(std::max<std::int64_t>(count, 1)) * sizeof(T)) {
    data_ = static_cast<T*>(allocate_host_buffer(bytes_));
    if (!data_) throw std::bad_alloc();
  }
  ~SortScratch() { release_host_buffer(data_, bytes_); }
  SortScratch(const SortScratch&) = delete;
  SortScratch& operator=(const SortScratch&) = delete;
  T* get() const { return data_; }

 private:
  T* data_ = nullptr;
  std::size_t bytes_ = 0;
};

/// The order of one short row: order[j] = the index of the j-th smallest key, equal keys by
/// index. The pairs (key, index) are distinct, so an unstable std::sort on them is stable in
/// the keys. Keys of up to 32 bits pack with the index into one 64-bit integer (key high).
template <class K>
void comparison_sort_row(const K* keys, std::uint32_t* order, std::int64_t n) {
  if constexpr (sizeof(K) <= 4) {
    thread_local std::vector<std::uint64_t> packed;
    packed.resize(std::size_t(n));
    for (std::int64_t i = 0; i < n; ++i) packed[std::size_t(i)] = (std::uint64_t(keys[i]) << 32) | std::uint64_t(i);
    std::sort(packed.begin(), packed.end());
    for (std::int64_t j = 0; j < n; ++j) order[j] = std::uint32_t(packed[std::size_t(j)]);
  } else {
    thread_local std::vector<std::pair<K, std::uint32_t>> pairs;
    pairs.resize(std::size_t(n));
    for (std::int64_t i = 0; i < n; ++i) pairs[std::size_t(i)] = {keys[i], std::uint32_t(i)};
    std::sort(pairs.begin(), pairs.end());
    for (std::int64_t j = 0; j < n; ++j) order[j] = pairs[std::size_t(j)].second;
  }
}

/// Sorts keys[0..n) by an LSD radix sort, one thread: the digit counts of every pass in one read,
/// then per pass an exclusive prefix of the counts and a scatter in index order, which keeps equal
/// digits in their current order (so the whole sort is stable). A pass where every key has the same
/// digit moves nothing and is skipped; digits are taken of key - low, low the row's smallest key.
/// Returns the buffer (order or order_alt) that holds the permutation: element j of the sorted row
/// is element result[j] of the input. keys / keys_alt are overwritten.
template <class K, class Index>
Index* radix_sort_row(K* keys, K* keys_alt, Index* order, Index* order_alt, std::int64_t n, K low) {
  constexpr int P = kRadixPasses<K>;
  std::array<std::array<Index, kRadixBuckets>, P> count{};
  for (std::int64_t i = 0; i < n; ++i)
    for (int p = 0; p < P; ++p) ++count[p][radix_digit(keys[i], low, p)];
  bool moved = false;
  for (int p = 0; p < P; ++p) {
    if (count[p][radix_digit(keys[0], low, p)] == Index(n)) continue;
    Index offset = 0;
    for (Index& c : count[p]) offset += std::exchange(c, offset);
    for (std::int64_t i = 0; i < n; ++i) {
      const K key = keys[i];
      const Index at = count[p][radix_digit(key, low, p)]++;
      keys_alt[at] = key;
      order_alt[at] = moved ? order[i] : Index(i);
    }
    std::swap(keys, keys_alt);
    std::swap(order, order_alt);
    moved = true;
  }
  if (!moved) std::iota(order, order + n, Index(0));
  return order;
}

/// radix_sort_row over one long row with `threads` threads: each owns a chunk of positions; per
/// pass it counts its chunk's digits, one thread turns the counts into offsets in (digit, thread)
/// order, and each scatters its chunk, so equal digits keep their order across chunks too. The
/// first count covers every pass (to skip the passes that move nothing); a pass after a move
/// recounts its chunk. make_keys(lo, hi) fills keys[lo..hi) in parallel first and returns their
/// smallest (the digits are of key - the row's smallest key, as in radix_sort_row).
template <class K, class Index, class MakeKeys>
Index* radix_sort_long_row(K* keys, K* keys_alt, Index* order, Index* order_alt, std::int64_t n, int threads,
                           const MakeKeys& make_keys) {
  constexpr int P = kRadixPasses<K>;
  std::vector<std::array<std::array<Index, kRadixBuckets>, P>> count(static_cast<std::size_t>(threads));
  std::vector<K> lows(static_cast<std::size_t>(threads));
  std::array<bool, P> skip{};
  Index* result = order;
  WEFT_PRAGMA_OMP(omp parallel num_threads(threads))
  {
    const ThreadChunk chunk = this_thread_chunk(n);
    const std::int64_t lo = chunk.begin, hi = chunk.end;
    const int nt = chunk.threads;
    auto& mine = count[std::size_t(chunk.thread)];
    lows[std::size_t(chunk.thread)] = make_keys(lo, hi);
    WEFT_PRAGMA_OMP(omp barrier)
    const K low = *std::min_element(lows.begin(), lows.begin() + nt);
    for (std::int64_t i = lo; i < hi; ++i)
      for (int p = 0; p < P; ++p) ++mine[p][radix_digit(keys[i], low, p)];
    WEFT_PRAGMA_OMP(omp barrier)
    WEFT_PRAGMA_OMP(omp single)
    for (int p = 0; p < P; ++p)
      for (int d = 0; d < kRadixBuckets; ++d) {
        Index total = 0;
        for (int u = 0; u < nt; ++u) total += count[std::size_t(u)][p][d];
        skip[p] = skip[p] || total == Index(n);
      }
    K *src = keys, *dst = keys_alt;
    Index *src_order = order, *dst_order = order_alt;
    bool passed = false;  // this thread's copy of `moved`
    for (int p = 0; p < P; ++p) {
      if (skip[p]) continue;
      if (passed) {
        mine[p].fill(0);
        for (std::int64_t i = lo; i < hi; ++i) ++mine[p][radix_digit(src[i], low, p)];
        WEFT_PRAGMA_OMP(omp barrier)
      }
      WEFT_PRAGMA_OMP(omp single)
      {
        Index offset = 0;
        for (int d = 0; d < kRadixBuckets; ++d)
          for (int u = 0; u < nt; ++u) offset += std::exchange(count[std::size_t(u)][p][d], offset);
      }
      for (std::int64_t i = lo; i < hi; ++i) {
        const K key = src[i];
        const Index at = mine[p][radix_digit(key, low, p)]++;
        dst[at] = key;
        dst_order[at] = passed ? src_order[i] : Index(i);
      }
      WEFT_PRAGMA_OMP(omp barrier)
      std::swap(src, dst);
      std::swap(src_order, dst_order);
      passed = true;
    }
    if (!passed) std::iota(order + lo, order + hi, Index(lo));
    WEFT_PRAGMA_OMP(omp single nowait)
    result = src_order;  // every thread swapped alike
  }
  return result;
}

/// The sorted row written out: indices[j * inner] = order[j], values[j * inner] = xr[order[j] * inner]
/// (the element itself, bit for bit: NaN payloads and -0.0 as they were), j in [lo, hi). A pass of
/// its own, in rank order: writing them from the last radix pass instead (scattered int64 indices
/// and gathered values) measured slower, 5.2 against 4.6 ms for one row of 1M floats.
template <class T, class Index>
void write_sorted_row(const T* xr, const Index* order, T* values, std::int64_t* indices, std::int64_t inner,
                      std::int64_t lo, std::int64_t hi) {
  for (std::int64_t j = lo; j < hi; ++j) {
    const std::int64_t i = std::int64_t(order[j]);
    indices[j * inner] = i;
    if (values) values[j * inner] = xr[i * inner];
  }
}

/// Many rows: OpenMP over rows, each row sorted by one thread in its own scratch.
template <class T>
void sort_rows(const T* x, T* values, std::int64_t* indices, std::int64_t outer, std::int64_t n, std::int64_t inner,
               bool descending, int threads) {
  using K = radix_key_t<T>;
  const std::int64_t rows = outer * inner;
  WEFT_PRAGMA_OMP(omp parallel num_threads(threads) if (threads > 1))
  {
    SortScratch<K> keys(n), keys_alt(n);
    SortScratch<std::uint32_t> order(n), order_alt(n);
    WEFT_PRAGMA_OMP(omp for schedule(static))
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t base = (r / inner) * n * inner + r % inner;
      const T* xr = x + base;
      K low = K(~K(0));
      for (std::int64_t i = 0; i < n; ++i) {
        const K key = radix_key(xr[i * inner], descending);
        keys.get()[i] = key;
        low = std::min(low, key);
      }
      const std::uint32_t* sorted = order.get();
      if (n < kRadixMinRow<K>) comparison_sort_row(keys.get(), order.get(), n);
      else sorted = radix_sort_row(keys.get(), keys_alt.get(), order.get(), order_alt.get(), n, low);
      write_sorted_row(xr, sorted, values ? values + base : nullptr, indices + base, inner, 0, n);
    }
  }
}

/// Few long rows: one after another, each sorted by every thread (radix_sort_long_row).
template <class T, class Index>
void sort_long_rows(const T* x, T* values, std::int64_t* indices, std::int64_t outer, std::int64_t n,
                    std::int64_t inner, bool descending, int threads) {
  using K = radix_key_t<T>;
  SortScratch<K> keys(n), keys_alt(n);
  SortScratch<Index> order(n), order_alt(n);
  for (std::int64_t r = 0; r < outer * inner; ++r) {
    const std::int64_t base = (r / inner) * n * inner + r % inner;
    const T* xr = x + base;
    K* k = keys.get();
    const Index* sorted = radix_sort_long_row(k, keys_alt.get(), order.get(), order_alt.get(), n, threads,
                                              [&](std::int64_t lo, std::int64_t hi) {
                                                K low = K(~K(0));
                                                for (std::int64_t i = lo; i < hi; ++i) {
                                                  k[i] = radix_key(xr[i * inner], descending);
                                                  low = std::min(low, k[i]);
                                                }
                                                return low;
                                              });
    WEFT_PRAGMA_OMP(omp parallel num_threads(threads))
    {
      const ThreadChunk chunk = this_thread_chunk(n);
      write_sorted_row(xr, sorted, values ? values + base : nullptr, indices + base, inner, chunk.begin, chunk.end);
    }
  }
}

/// A stable sort of each row of a contiguous (outer, n, inner) tensor along n, ascending or
/// descending (NaN last ascending, first descending; -0.0 ties 0.0), into values (nullptr: not
/// wanted) and indices of the same layout: values[o, j, c] = x[o, indices[o, j, c], c].
template <class T>
void run_sort(const T* x, T* values, std::int64_t* indices, std::int64_t outer, std::int64_t n, std::int64_t inner,
              bool descending) {
  const std::int64_t rows = outer * inner;
  if (rows == 0 || n == 0) return;
  const int threads = threads_for(rows * n);
  const bool long_rows = rows < threads && n >= kRadixMinRow<radix_key_t<T>>;
  if (long_rows && n <= std::int64_t(std::numeric_limits<std::uint32_t>::max()))
    sort_long_rows<T, std::uint32_t>(x, values, indices, outer, n, inner, descending, threads);
  else if (long_rows || n > std::int64_t(std::numeric_limits<std::uint32_t>::max()))
    sort_long_rows<T, std::uint64_t>(x, values, indices, outer, n, inner, descending, threads);
  else sort_rows(x, values, indices, outer, n, inner, descending, threads);
}

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)

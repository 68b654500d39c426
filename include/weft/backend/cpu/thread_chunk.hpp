// SPDX-License-Identifier: MIT
/// @file ThreadChunk: the calling OpenMP thread's contiguous part of [0, n), for the executors that count per chunk, combine the counts, then write per chunk (radix sort passes, stream compaction).
#pragma once

#include <cstdint>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace weft::detail::cpu {

/// Thread `thread` of a team of `threads` owns [begin, end) = [n thread / threads, n (thread + 1) / threads).
struct ThreadChunk {
  int thread = 0, threads = 1;
  std::int64_t begin = 0, end = 0;
};

/// The calling thread's chunk of [0, n) in the enclosing parallel region (all of it outside one).
inline ThreadChunk this_thread_chunk(std::int64_t n) {
  ThreadChunk c;
#if defined(_OPENMP)
  c.thread = omp_get_thread_num();
  c.threads = omp_get_num_threads();
#endif
  c.begin = n * c.thread / c.threads;
  c.end = n * (c.thread + 1) / c.threads;
  return c;
}

}  // namespace weft::detail::cpu

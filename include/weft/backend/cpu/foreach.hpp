// SPDX-License-Identifier: MIT
/// @file Splits the elements of a list of tensors across threads in ONE parallel region.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "weft/core/config.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace weft::detail::cpu {

/// Thread t of `threads` takes elements [t*total/T, (t+1)*total/T) of the
/// lists' concatenated elements, which may start inside one tensor and end
/// inside another: a list of thousands of small tensors costs one fork/join
/// and no scheduling. `make_worker(t)` runs once per thread and returns the
/// callable that gets (tensor k, begin, end) for each of the thread's pieces,
/// in order; empty tensors are skipped. The threads' boundaries are rounded down to multiples of
/// `granule` (non-temporal stores need whole aligned packets in every piece).
template <class MakeWorker>
void for_each_list_piece(const std::vector<std::int64_t>& sizes, int threads, MakeWorker&& make_worker,
                         std::int64_t granule = 1) {
  std::vector<std::int64_t> start(sizes.size() + 1, 0);
  for (std::size_t k = 0; k < sizes.size(); ++k) start[k + 1] = start[k] + sizes[k];
  const std::int64_t total = start.back();
  if (total == 0) return;
  auto run_part = [&](int t, std::int64_t begin, std::int64_t end) {
    auto worker = make_worker(t);
    std::size_t k = std::size_t(std::upper_bound(start.begin(), start.end(), begin) - start.begin() - 1);
    for (; begin < end; ++k) {
      if (sizes[k] == 0) continue;
      std::int64_t stop = std::min(end, start[k + 1]);
      worker(std::int64_t(k), begin - start[k], stop - start[k]);
      begin = stop;
    }
  };
  if (threads <= 1) return run_part(0, 0, total);
  WEFT_PRAGMA_OMP(omp parallel num_threads(threads))
  {
#if defined(_OPENMP)
    const int t = omp_get_thread_num();
#else
    const int t = 0;
#endif
    auto boundary = [&](int u) { return u == threads ? total : total * u / threads / granule * granule; };
    run_part(t, boundary(t), boundary(t + 1));
  }
}

}  // namespace weft::detail::cpu

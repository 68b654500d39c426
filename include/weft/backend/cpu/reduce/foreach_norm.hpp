// SPDX-License-Identifier: MIT
/// @file The CPU executor of foreach norms: per-tensor sums of |x|^p (or max |x|) over all tensors of a list in ONE parallel pass.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "weft/backend/cpu/foreach.hpp"
#include "weft/backend/cpu/pointwise.hpp"
#include "weft/core/tensor_list.hpp"
#include "weft/plan/reduction.hpp"

// Host code only: nvcc's device pass has no SIMD layer (backend/cpu/simd/vec.hpp).
#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu {

/// The partial of `order` over the n elements at x: a sum of |x|^p, or a max of |x|.
template <class T>
double norm_partial(const ForeachNormOrder& order, const T* x, std::int64_t n) {
  using M = math_t<to_floating_t<T>>;  // integers square in float: int32 lanes would overflow
  constexpr int L = simd::kBytes / int(sizeof(M));
  using V = simd::Vec<M, L>;
  const double p = order.p;
  double total = 0;
  std::int64_t i = 0;
  // Blocks of 64 packets accumulate in M (error ~ 64 eps of the block), then in double.
  constexpr std::int64_t kBlock = 64 * L;
  if (p == 2 || p == 1 || order.is_max()) {
    for (; i + L <= n; ) {
      V acc = V::broadcast(M(0));
      std::int64_t stop = std::min(n - (n - i) % L, i + kBlock);
      for (; i < stop; i += L) {
        V v = load_packet<M, L>(x + i, 1);
        if (p == 2) acc = acc + v * v;
        else if (p == 1) acc = acc + simd::abs(v);
        else acc = simd::max(acc, simd::abs(v));
      }
      for (int l = 0; l < L; ++l) total = order.combine(total, double(acc[l]));
    }
  }
  for (; i < n; ++i) {
    double a = std::fabs(double(M(x[i])));
    total = order.is_max() ? std::max(total, a) : total + (p == 2 ? a * a : p == 1 ? a : std::pow(a, p));
  }
  return total;
}

/// Partials of every tensor of `list` (contiguous CPU tensors), in ONE parallel pass over all
/// elements.
template <class T>
std::vector<double> foreach_norm_partials(const TensorList<T>& list, const ForeachNormOrder& order) {
  std::vector<std::int64_t> sizes;
  for (std::size_t k = 0; k < list.size(); ++k) sizes.push_back(list[k].numel());
  std::int64_t total = 0;
  for (auto n : sizes) total += n;
  const int threads = threads_for(total);
  // Each thread's pieces cover consecutive tensors; it keeps one partial per
  // tensor it touched, merged after the region (at most two threads share one).
  std::vector<std::vector<std::pair<std::int64_t, double>>> per_thread(std::size_t(std::max(threads, 1)));
  for_each_list_piece(sizes, threads, [&](int t) {
    return [&, t](std::int64_t k, std::int64_t begin, std::int64_t end) {
      per_thread[t].push_back({k, norm_partial(order, list[k].data() + begin, end - begin)});
    };
  });
  std::vector<double> partials(list.size(), 0.0);
  for (const auto& pieces : per_thread)
    for (auto [k, v] : pieces) partials[k] = order.combine(partials[k], v);
  return partials;
}

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)

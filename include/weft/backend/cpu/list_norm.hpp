// SPDX-License-Identifier: MIT
/// @file The CPU executor of list norms: per-tensor sums of |x|^p (or max |x|) over all tensors of a list in ONE parallel pass.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "weft/backend/cpu/foreach.hpp"
#include "weft/backend/cpu/pointwise.hpp"
#include "weft/core/tensor_list.hpp"

namespace weft::detail {
inline namespace WEFT_BACKEND_ABI {

/// How |x| values of one tensor combine into its p-norm: sum of |x|^p, or max for p = inf.
struct ListNormOrder {
  double p;
  bool is_max() const { return std::isinf(p); }
  /// The per-tensor partial of n elements at x (a sum of |x|^p, or a max of |x|).
  template <class T>
  double partial(const T* x, std::int64_t n) const;
  double finish(double partial) const { return is_max() || p == 1 ? partial : std::pow(partial, 1.0 / p); }
  double combine(double a, double b) const { return is_max() ? std::max(a, b) : a + b; }
};

/// Partials of every tensor of `list`, in ONE parallel pass over all elements.
template <class T>
std::vector<double> list_norm_partials(const TensorList<T>& list, ListNormOrder kind, const char* op);

// The definitions are host code only: nvcc's device pass has no SIMD layer (see simd.hpp); it
// parses the callers, which run on the host.
#if !defined(__CUDA_ARCH__)
template <class T>
double ListNormOrder::partial(const T* x, std::int64_t n) const {
  using M = math_t<T>;
  constexpr int L = simd::kBytes / int(sizeof(M));
  using V = simd::Vec<M, L>;
  double total = 0;
  std::int64_t i = 0;
  // Blocks of 64 packets accumulate in M (error ~ 64 eps of the block), then in double.
  constexpr std::int64_t kBlock = 64 * L;
  if (p == 2 || p == 1 || is_max()) {
    for (; i + L <= n; ) {
      V acc = V::broadcast(M(0));
      std::int64_t stop = std::min(n - (n - i) % L, i + kBlock);
      for (; i < stop; i += L) {
        V v = load_packet<M, L>(x + i, 1);
        if (p == 2) acc = acc + v * v;
        else if (p == 1) acc = acc + simd::abs(v);
        else acc = simd::max(acc, simd::abs(v));
      }
      for (int l = 0; l < L; ++l) total = combine(total, double(acc[l]));
    }
  }
  for (; i < n; ++i) {
    double a = std::fabs(double(M(x[i])));
    total = is_max() ? std::max(total, a) : total + (p == 2 ? a * a : p == 1 ? a : std::pow(a, p));
  }
  return total;
}

template <class T>
std::vector<double> list_norm_partials(const TensorList<T>& list, ListNormOrder kind, const char* op) {
  std::vector<std::int64_t> sizes;
  for (std::size_t k = 0; k < list.size(); ++k) {
    const auto& t = list[k];
    if (!t.defined()) fail(op, "tensor ", k, " of the list is empty (default-constructed)");
    if (!t.device().is_cpu())
      fail(op, "tensor ", k, " is on ", t.device(), "; list norms run on the CPU only: move the list with .to(Device::cpu())");
    if (!t.is_contiguous())
      fail(op, "tensor ", k, " of shape ", t.shape(), " has strides ", t.strides(), "; call .contiguous() first");
    sizes.push_back(t.numel());
  }
  std::int64_t total = 0;
  for (auto n : sizes) total += n;
  const int threads = cpu::threads_for(total);
  // Each thread's pieces cover consecutive tensors; it keeps one partial per
  // tensor it touched, merged after the region (at most two threads share one).
  std::vector<std::vector<std::pair<std::int64_t, double>>> per_thread(std::size_t(std::max(threads, 1)));
  cpu::for_each_list_piece(sizes, threads, [&](int t) {
    return [&, t](std::int64_t k, std::int64_t begin, std::int64_t end) {
      per_thread[t].push_back({k, kind.partial(list[k].data() + begin, end - begin)});
    };
  });
  std::vector<double> partials(list.size(), 0.0);
  for (const auto& pieces : per_thread)
    for (auto [k, v] : pieces) partials[k] = kind.combine(partials[k], v);
  return partials;
}
#endif  // !defined(__CUDA_ARCH__)

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail

// SPDX-License-Identifier: MIT
/// @file List reductions: per-tensor norms (foreach_norm), the global norm, and clip_grad_norm.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "weft/backend/cpu/foreach.hpp"
#include "weft/backend/cpu/pointwise.hpp"
#include "weft/core/factories.hpp"
#include "weft/core/tensor_list.hpp"
#include "weft/plan/evaluator.hpp"

namespace weft {

/// dtype of a norm of T values: float for 16-bit floats and integers, else T.
template <class T>
using norm_t = math_t<to_floating_t<T>>;

namespace detail {

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

/// Partials of every tensor of `list`, in ONE parallel pass over all elements.
template <class T>
std::vector<double> list_norm_partials(const TensorList<T>& list, ListNormOrder kind, const char* op) {
  std::vector<std::int64_t> sizes;
  for (std::size_t k = 0; k < list.size(); ++k) {
    const auto& t = list[k];
    if (!t.defined()) fail(op, "tensor ", k, " of the list is empty (default-constructed)");
    if (!t.device().is_cpu())
      fail(op, "tensor ", k, " is on ", t.device(), "; list norms run on the CPU in this version");
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
#endif

inline void check_norm_order(const char* op, double p) {
  if (!(p > 0)) fail(op, "norm order p must be positive (or infinity), got ", p);
}

}  // namespace detail

/// The p-norm of each tensor of `list` (shape [list.size()]), in one pass over all elements.
template <Element T>
Tensor<norm_t<T>> foreach_norm(const TensorList<T>& list, double p = 2) {
  detail::check_norm_order("foreach_norm", p);
  detail::ListNormOrder kind{p};
  std::vector<double> partials = detail::list_norm_partials(list, kind, "foreach_norm");
  std::vector<norm_t<T>> norms;
  for (double v : partials) norms.push_back(norm_t<T>(kind.finish(v)));
  return from_vector(norms, Shape{std::int64_t(norms.size())});
}

/// The p-norm of all elements of all tensors of `list` (a 0-dim tensor).
template <Element T>
Tensor<norm_t<T>> global_norm(const TensorList<T>& list, double p = 2) {
  detail::check_norm_order("global_norm", p);
  detail::ListNormOrder kind{p};
  double total = 0;
  for (double v : detail::list_norm_partials(list, kind, "global_norm")) total = kind.combine(total, v);
  return from_vector(std::vector<norm_t<T>>{norm_t<T>(kind.finish(total))}, Shape{});
}

/// Scales `grads` in place so that their global p-norm is at most max_norm
/// (torch.nn.utils.clip_grad_norm_: coef = max_norm / (norm + 1e-6), applied
/// when below 1). One reduction pass, then one foreach scaling kernel, skipped
/// when no scaling is needed. Returns the norm before clipping.
template <Element T>
Tensor<norm_t<T>> clip_grad_norm(TensorList<T>& grads, double max_norm, double p = 2) {
  if (!(max_norm >= 0)) detail::fail("clip_grad_norm", "max_norm must be >= 0, got ", max_norm);
  Tensor<norm_t<T>> norm = global_norm(grads, p);
  const double coef = max_norm / (double(norm.item()) + 1e-6);
  if (coef < 1) grads *= coef;
  return norm;
}

}  // namespace weft

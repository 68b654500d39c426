// SPDX-License-Identifier: MIT
/// @file batch_norm's per-channel reductions over contiguous planes (NCHW memory): the training statistics in one read of x, and the backward's two sums in one read of x and dy.
///
/// Why. An [N, C, S] input whose S elements of each (n, c) are contiguous is N C planes; a plane of
/// a CIFAR ResNet (S <= 1024 floats) fits in the L1 cache. The statistics take two passes over
/// each plane (its mean, then its squared deviations from that mean: no cancellation where |mean|
/// >> std, unlike a sum of squares) while it is in cache, and merge the planes' moments by Chan et
/// al.'s formula, so x is read from memory once instead of twice (var_mean's two passes). The
/// backward's sums of dy and of dy (x - mean) come from one read of x and dy instead of two. The
/// planes run in parallel in memory order, each plane's results kept apart, and a channel's planes
/// merge in order after: the results do not depend on the thread count.
#pragma once

#include <cstdint>
#include <vector>

#include "weft/core/tensor.hpp"
#include "weft/nn/vision_planes.hpp"
#include "weft/ops/factories.hpp"

namespace weft::detail {
inline namespace WEFT_BACKEND_ABI {

/// x's per-channel statistics in A = math_t<T>, shape [1, C, 1] (broadcasting over x's [N, C, S]
/// view): in training the batch mean and the biased variance over N and S, else the running ones.
template <class A>
struct ChannelMoments {
  Tensor<A> mean, var;
};

/// Whether the planes kernels read x3 [N, C, S] in place: each (n, c)'s S elements contiguous.
template <class T>
bool has_contiguous_planes(const TensorView<const T>& x3) {
  return x3.strides()[2] == 1 || x3.shape()[2] == 1;
}

/// Runs plane(p, n, c) for every plane p = n C + c of an [N, C, S] view, in parallel over the
/// planes in memory order (each thread a contiguous run of them: reads go through memory in
/// sequence, not channel by channel across the batch).
template <class Plane>
void for_each_plane(std::int64_t N, std::int64_t C, std::int64_t work_per_plane, Plane&& plane) {
  WEFT_PRAGMA_OMP(omp parallel for schedule(static) num_threads(vision_threads(N * C, work_per_plane)))
  for (std::int64_t p = 0; p < N * C; ++p) plane(p, p / C, p % C);
}

/// The batch mean and biased variance per channel of x3 [N, C, S] with contiguous planes. Plane n
/// of a channel has mean m_n and M2_n = sum (x - m_n)^2 over its S values; merged into the
/// running (mean, M2) of the n S values before it (Chan et al.), with delta = m_n - mean:
///   mean += delta / (n + 1),  M2 += M2_n + delta^2 S n / (n + 1);  var = M2 / (N S).
template <class T>
ChannelMoments<math_t<T>> plane_moments(const TensorView<const T>& x3) {
  using A = math_t<T>;
  const std::int64_t N = x3.shape()[0], C = x3.shape()[1], S = x3.shape()[2];
  const std::int64_t sn = x3.strides()[0], sc = x3.strides()[1];
  const T* x = x3.data();
  std::vector<A> plane_mean(static_cast<std::size_t>(N * C)), plane_m2(static_cast<std::size_t>(N * C));
  for_each_plane(N, C, S, [&](std::int64_t p, std::int64_t n, std::int64_t c) {
    const T* v = x + n * sn + c * sc;
    A sum = 0;
    WEFT_PRAGMA_OMP(omp simd reduction(+ : sum))
    for (std::int64_t i = 0; i < S; ++i) sum += A(v[i]);
    const A mean = sum / A(S);
    A m2 = 0;
    WEFT_PRAGMA_OMP(omp simd reduction(+ : m2))
    for (std::int64_t i = 0; i < S; ++i) {
      const A d = A(v[i]) - mean;
      m2 += d * d;
    }
    plane_mean[std::size_t(p)] = mean, plane_m2[std::size_t(p)] = m2;
  });
  ChannelMoments<A> out{empty<A>({1, C, 1}), empty<A>({1, C, 1})};
  for (std::int64_t c = 0; c < C; ++c) {
    A run_mean = 0, run_m2 = 0;
    for (std::int64_t n = 0; n < N; ++n) {
      const std::size_t p = std::size_t(n * C + c);
      const A delta = plane_mean[p] - run_mean, weight = A(1) / A(n + 1);
      run_mean += delta * weight;
      run_m2 += plane_m2[p] + delta * delta * A(S) * A(n) * weight;
    }
    out.mean.data()[c] = run_mean;
    out.var.data()[c] = run_m2 / A(N * S);
  }
  return out;
}

/// batch_norm_backward's per-channel sums, [1, C, 1] each: of dy, and of dy (x - mean).
template <class A>
struct ChannelGradientSums {
  Tensor<A> dy, dy_centered;
};

/// sum dy and sum dy (x - mean) per channel over N and S, for x3 and dy3 [N, C, S] of one layout
/// with contiguous planes, and mean [1, C, 1] (contiguous): one read of each, per plane, then the
/// planes' sums added over n in order.
template <class T>
ChannelGradientSums<math_t<T>> plane_gradient_sums(const TensorView<const T>& x3, const TensorView<const T>& dy3,
                                                   const Tensor<math_t<T>>& mean) {
  using A = math_t<T>;
  const std::int64_t N = x3.shape()[0], C = x3.shape()[1], S = x3.shape()[2];
  const std::int64_t sn = x3.strides()[0], sc = x3.strides()[1];
  const T* x = x3.data();
  const T* dy = dy3.data();
  const A* m = mean.data();
  std::vector<A> plane_dy(static_cast<std::size_t>(N * C)), plane_dy_centered(static_cast<std::size_t>(N * C));
  for_each_plane(N, C, 2 * S, [&](std::int64_t p, std::int64_t n, std::int64_t c) {
    const std::int64_t at = n * sn + c * sc;
    const T* px = x + at;
    const T* pdy = dy + at;
    const A channel_mean = m[c];
    A g = 0, gc = 0;
    WEFT_PRAGMA_OMP(omp simd reduction(+ : g, gc))
    for (std::int64_t i = 0; i < S; ++i) {
      const A d = A(pdy[i]);
      g += d;
      gc += d * (A(px[i]) - channel_mean);
    }
    plane_dy[std::size_t(p)] = g, plane_dy_centered[std::size_t(p)] = gc;
  });
  ChannelGradientSums<A> out{empty<A>({1, C, 1}), empty<A>({1, C, 1})};
  for (std::int64_t c = 0; c < C; ++c) {
    A g = 0, gc = 0;
    for (std::int64_t n = 0; n < N; ++n) {
      const std::size_t p = std::size_t(n * C + c);
      g += plane_dy[p], gc += plane_dy_centered[p];
    }
    out.dy.data()[c] = g;
    out.dy_centered.data()[c] = gc;
  }
  return out;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail

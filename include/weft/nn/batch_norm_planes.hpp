// SPDX-License-Identifier: MIT
/// @file batch_norm's per-channel reductions over contiguous planes (NCHW memory): the training statistics in one read of x, and the backward's two sums in one read of x and dy.
///
/// Why. An [N, C, S] input whose S elements of each (n, c) are contiguous is N C planes; a plane of
/// a CIFAR ResNet (S <= 1024 floats) fits in the L1 cache. The statistics take two passes over
/// each plane (its mean, then its squared deviations from that mean: no cancellation where |mean|
/// >> std, unlike a sum of squares) while it is in cache, and merge the planes' moments by Chan et
/// al.'s formula, so x is read from memory once instead of twice (var_mean's two passes). The
/// backward's sums of dy and of dy (x - mean) come from one read of x and dy instead of two. Each
/// channel runs on one thread, its planes in order, so the results do not depend on the thread count.
#pragma once

#include <cstdint>

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

/// The batch mean and biased variance per channel of x3 [N, C, S] with contiguous planes. Plane n
/// of a channel has mean m_n and M2_n = sum (x - m_n)^2 over its S values; merged into the
/// running (mean, M2) of the n S values before it (Chan et al.), with delta = m_n - mean:
///   mean += delta / (n + 1),  M2 += M2_n + delta^2 S n / (n + 1);  var = M2 / (N S).
template <class T>
ChannelMoments<math_t<T>> plane_moments(const TensorView<const T>& x3) {
  using A = math_t<T>;
  const std::int64_t N = x3.shape()[0], C = x3.shape()[1], S = x3.shape()[2];
  const std::int64_t sn = x3.strides()[0], sc = x3.strides()[1];
  ChannelMoments<A> out{empty<A>({1, C, 1}), empty<A>({1, C, 1})};
  const T* x = x3.data();
  A* mean = out.mean.data();
  A* var = out.var.data();
  WEFT_PRAGMA_OMP(omp parallel for schedule(static) num_threads(vision_threads(C, N * S)))
  for (std::int64_t c = 0; c < C; ++c) {
    A run_mean = 0, run_m2 = 0;
    for (std::int64_t n = 0; n < N; ++n) {
      const T* p = x + n * sn + c * sc;
      A sum = 0;
      WEFT_PRAGMA_OMP(omp simd reduction(+ : sum))
      for (std::int64_t i = 0; i < S; ++i) sum += A(p[i]);
      const A plane_mean = sum / A(S);
      A m2 = 0;
      WEFT_PRAGMA_OMP(omp simd reduction(+ : m2))
      for (std::int64_t i = 0; i < S; ++i) {
        const A d = A(p[i]) - plane_mean;
        m2 += d * d;
      }
      const A delta = plane_mean - run_mean, weight = A(1) / A(n + 1);
      run_mean += delta * weight;
      run_m2 += m2 + delta * delta * A(S) * A(n) * weight;
    }
    mean[c] = run_mean;
    var[c] = run_m2 / A(N * S);
  }
  return out;
}

/// batch_norm_backward's per-channel sums, [1, C, 1] each: of dy, and of dy (x - mean).
template <class A>
struct ChannelGradientSums {
  Tensor<A> dy, dy_centered;
};

/// sum dy and sum dy (x - mean) per channel over N and S, for x3 and dy3 [N, C, S] of one layout
/// with contiguous planes, and mean [1, C, 1] (contiguous): one read of each.
template <class T>
ChannelGradientSums<math_t<T>> plane_gradient_sums(const TensorView<const T>& x3, const TensorView<const T>& dy3,
                                                   const Tensor<math_t<T>>& mean) {
  using A = math_t<T>;
  const std::int64_t N = x3.shape()[0], C = x3.shape()[1], S = x3.shape()[2];
  const std::int64_t sn = x3.strides()[0], sc = x3.strides()[1];
  ChannelGradientSums<A> out{empty<A>({1, C, 1}), empty<A>({1, C, 1})};
  const T* x = x3.data();
  const T* dy = dy3.data();
  const A* m = mean.data();
  A* sum_dy = out.dy.data();
  A* sum_dy_centered = out.dy_centered.data();
  WEFT_PRAGMA_OMP(omp parallel for schedule(static) num_threads(vision_threads(C, 2 * N * S)))
  for (std::int64_t c = 0; c < C; ++c) {
    A g = 0, gc = 0;
    for (std::int64_t n = 0; n < N; ++n) {
      const std::int64_t at = n * sn + c * sc;
      const T* px = x + at;
      const T* pdy = dy + at;
      WEFT_PRAGMA_OMP(omp simd reduction(+ : g, gc))
      for (std::int64_t i = 0; i < S; ++i) {
        const A d = A(pdy[i]);
        g += d;
        gc += d * (A(px[i]) - m[c]);
      }
    }
    sum_dy[c] = g;
    sum_dy_centered[c] = gc;
  }
  return out;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail

// SPDX-License-Identifier: MIT
/// @file Planes: how the pooling and interpolation ops read an [N, C, H, W] input in place (extents and element strides, either memory layout), check it, and split their work over threads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "weft/backend/threads.hpp"
#include "weft/core/dtype.hpp"
#include "weft/nn/vision_options.hpp"
#include "weft/ops/factories.hpp"

namespace weft::detail {
inline namespace WEFT_BACKEND_ABI {

/// The vision ops' compile-time dtype check: floating tensors (16-bit floats compute in float).
template <class T>
constexpr void check_vision_dtype() {
  static_assert(is_floating_v<T>,
                "weft::nn pooling and interpolation need floating-point tensors; use weft::cast<float>(x)");
}

/// An [N, C, H, W] input read in place: element (n, c, h, w) is
/// data[n sn + c sc + h sh + w sw]. A channels-last view (NHWC memory) has sc == 1.
template <class T>
struct Planes {
  const T* data = nullptr;
  std::int64_t n = 0, c = 0, h = 0, w = 0;
  std::int64_t sn = 0, sc = 0, sh = 0, sw = 0;

  const T* plane(std::int64_t image, std::int64_t channel) const { return data + image * sn + channel * sc; }
  /// Channels are the contiguous dim (NHWC memory): the kernels then vectorize over C.
  bool channels_contiguous() const { return sc == 1 && c > 1; }
};

/// x as Planes after the checks every pooling and interpolation op shares: rank 4 and the CPU.
template <class T>
Planes<T> planes_of(const char* op, const TensorView<const T>& x) {
  if (!x.defined()) fail(op, "x is an empty (default-constructed) tensor");
  if (x.dim() != 4)
    fail(op, "x of shape ", x.shape(), " has rank ", x.dim(), "; x needs shape [N, C, H, W] (unsqueeze(0) adds N = 1)");
  if (!x.device().is_cpu())
    fail(op, "x (shape ", x.shape(), ") is on ", x.device(),
         "; this op runs on the CPU so far: move x with .to(weft::Device::cpu())");
  const Shape& s = x.shape();
  const Strides& st = x.strides();
  return {x.data(), s[0], s[1], s[2], s[3], st[0], st[1], st[2], st[3]};
}

/// A gradient dy checked against the shape its forward produced, read in place as Planes.
template <class T>
Planes<T> gradient_planes(const char* op, const TensorView<const T>& dy, const Shape& expected) {
  if (!dy.defined()) fail(op, "dy is an empty (default-constructed) tensor");
  if (!(dy.shape() == expected))
    fail(op, "dy of shape ", dy.shape(), " differs from the forward's output shape ", expected,
         "; dy is the gradient of that output");
  return planes_of(op, dy);
}

/// An input shape given to a backward: [N, C, H, W] with every extent >= 0.
inline void check_input_shape(const char* op, const Shape& input_shape) {
  bool ok = input_shape.rank() == 4;
  for (int d = 0; ok && d < 4; ++d) ok = input_shape[d] >= 0;
  if (!ok) fail(op, "input_shape ", input_shape, " is not an [N, C, H, W] shape; pass the forward input's shape");
}

/// Threads for `units` independent units of `work_per_unit` elements each: one per 2^14 elements
/// of work (below that a fork costs more than the work), at most one per unit.
inline int vision_threads(std::int64_t units, std::int64_t work_per_unit) {
  const std::int64_t by_work = units * std::max<std::int64_t>(work_per_unit, 1) / 16384;
  return int(std::clamp<std::int64_t>(std::min(by_work, units), 1, get_num_threads()));
}

/// Output positions o in [0, out) whose input position o stride + offset lies in [0, in): [lo, hi).
struct OutputRange {
  std::int64_t lo, hi;
};
inline OutputRange outputs_inside(std::int64_t offset, std::int64_t stride, std::int64_t in, std::int64_t out) {
  // o stride + offset >= 0  <=>  o >= ceil(-offset / stride); o stride + offset < in  <=>  o < ceil((in - offset) / stride)
  auto ceil_div = [](std::int64_t a, std::int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); };
  const std::int64_t lo = std::max<std::int64_t>(0, ceil_div(-offset, stride));
  const std::int64_t hi = std::min<std::int64_t>(out, ceil_div(in - offset, stride));
  return {lo, std::max(lo, hi)};
}

/// Runs body(p, grad) for every plane p of an [N, C, H, W] gradient, in parallel over planes:
/// grad is the plane's H W sums in the compute type, zeroed before and stored rounded into the
/// contiguous dx after (each element rounded once).
template <class T, class Body>
Tensor<T> accumulate_planes(const Shape& input_shape, [[maybe_unused]] std::int64_t work_per_plane, Body&& body) {
  using Acc = math_t<T>;
  Tensor<T> dx = empty<T>(input_shape);
  const std::int64_t planes = input_shape[0] * input_shape[1], plane_size = input_shape[2] * input_shape[3];
  WEFT_PRAGMA_OMP(omp parallel num_threads(vision_threads(planes, work_per_plane + plane_size)))
  {
    std::vector<Acc> grad(static_cast<std::size_t>(plane_size));
    WEFT_PRAGMA_OMP(omp for schedule(static))
    for (std::int64_t p = 0; p < planes; ++p) {
      std::fill(grad.begin(), grad.end(), Acc(0));
      body(p, grad.data());
      T* out = dx.data() + p * plane_size;
      for (std::int64_t i = 0; i < plane_size; ++i) out[i] = T(grad[std::size_t(i)]);
    }
  }
  return dx;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail

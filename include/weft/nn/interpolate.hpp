// SPDX-License-Identifier: MIT
/// @file nn::interpolate (torch.nn.functional.interpolate, nearest and bilinear, to a size or by scale factors), its backward on tensors and its autograd form over Vars.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "weft/ad/record.hpp"
#include "weft/nn/vision_planes.hpp"
#include "weft/ops/materialize.hpp"

namespace weft::nn {

/// interpolate's modes: nearest (torch's 'nearest': the source index is floor(o scale)) and
/// bilinear.
enum class InterpolateMode { nearest, bilinear };

}  // namespace weft::nn

namespace weft::detail {
inline namespace WEFT_BACKEND_ABI {

/// One spatial dim of an interpolation: in -> out, and the scale factor it was given (none when
/// a size was given), which fixes the source index as in torch.
struct InterpolateAxis {
  std::int64_t in = 0, out = 0;
  std::optional<double> scale;
};

struct InterpolateGeometry {
  InterpolateAxis h, w;
  nn::InterpolateMode mode = nn::InterpolateMode::nearest;
  bool align_corners = false;
};

/// How far apart the sources of consecutive outputs are (torch's area_pixel_compute_scale):
/// (in - 1) / (out - 1) with align_corners, else 1 / scale when a scale factor was given
/// (recompute_scale_factor = None), else in / out; in the compute type Acc. A dim whose size
/// does not change is copied (step 1) whatever its scale factor, as torch's CPU kernels do.
template <class Acc>
Acc source_step(const InterpolateAxis& a, bool align_corners) {
  if (align_corners) return a.out > 1 ? Acc(a.in - 1) / Acc(a.out - 1) : Acc(0);
  if (a.out == a.in) return Acc(1);
  return a.scale ? Acc(1.0 / *a.scale) : Acc(a.in) / Acc(a.out);
}

/// nearest's source of output o: min(floor(o step), in - 1), the step in float as torch's
/// (its exact shortcuts for out = in and out = 2 in kept).
inline std::int64_t nearest_source(std::int64_t o, const InterpolateAxis& a) {
  if (a.out == a.in) return o;
  if (a.out == 2 * a.in) return o >> 1;
  const float step = source_step<float>(a, false);
  return std::min<std::int64_t>(std::int64_t(std::floor(float(o) * step)), a.in - 1);
}

/// bilinear's two sources of an output along one dim and their weights: the source position
/// s = o step (align_corners) or max((o + 1/2) step - 1/2, 0); i0 = floor(s), i1 = i0 + 1 (i0
/// at the last input), l1 = s - i0, l0 = 1 - l1.
template <class Acc>
struct LinearSources {
  std::vector<std::int64_t> i0, i1;
  std::vector<Acc> l0, l1;
};
template <class Acc>
LinearSources<Acc> linear_sources(const InterpolateAxis& a, bool align_corners) {
  const Acc step = source_step<Acc>(a, align_corners);
  LinearSources<Acc> s;
  for (std::int64_t o = 0; o < a.out; ++o) {
    const Acc real = align_corners ? step * Acc(o) : std::max(step * (Acc(o) + Acc(0.5)) - Acc(0.5), Acc(0));
    const std::int64_t i0 = std::min<std::int64_t>(std::int64_t(real), a.in - 1);
    const Acc l1 = std::min(std::max(real - Acc(i0), Acc(0)), Acc(1));
    s.i0.push_back(i0);
    s.i1.push_back(i0 + (i0 < a.in - 1 ? 1 : 0));
    s.l0.push_back(Acc(1) - l1);
    s.l1.push_back(l1);
  }
  return s;
}

/// The sources of every output along both dims: nearest's one index (as i0), bilinear's two.
template <class Acc>
struct InterpolateSources {
  LinearSources<Acc> h, w;
};
template <class Acc>
InterpolateSources<Acc> interpolate_sources(const InterpolateGeometry& g) {
  if (g.mode == nn::InterpolateMode::bilinear)
    return {linear_sources<Acc>(g.h, g.align_corners), linear_sources<Acc>(g.w, g.align_corners)};
  InterpolateSources<Acc> s;
  for (std::int64_t o = 0; o < g.h.out; ++o) s.h.i0.push_back(nearest_source(o, g.h));
  for (std::int64_t o = 0; o < g.w.out; ++o) s.w.i0.push_back(nearest_source(o, g.w));
  return s;
}

/// Checks an interpolation against x's shape [N, C, H, W] as torch does and returns its geometry.
/// A size is given as out (scale none), a scale factor as scale (out = floor(in scale)).
inline InterpolateGeometry interpolate_geometry(const char* op, const Shape& x, InterpolateAxis h, InterpolateAxis w,
                                                nn::InterpolateMode mode, bool align_corners) {
  if (align_corners && mode == nn::InterpolateMode::nearest)
    fail(op, "align_corners = true needs mode bilinear; nearest has no corners to align (x of shape ", x, ")");
  if (x[1] == 0 || x[2] == 0 || x[3] == 0) fail(op, "x of shape ", x, " has an empty C, H or W; only N may be 0");
  for (InterpolateAxis* a : {&h, &w}) {
    if (a->scale) {
      if (!(*a->scale > 0 && std::isfinite(*a->scale)))
        fail(op, "scale factor ", *a->scale, " must be positive and finite (x of shape ", x, ")");
      a->out = std::int64_t(std::floor(double(a->in) * *a->scale));
    }
  }
  if (h.out < 1 || w.out < 1)
    fail(op, "the output size ", h.out, "x", w.out, " of x of shape ", x,
         " must be at least 1x1; pass a larger size or scale factor");
  return {h, w, mode, align_corners};
}

/// out[oh, ow] from x's plane: nearest copies x[ih(oh), iw(ow)]; bilinear is
///   l0h (l0w x[h0, w0] + l1w x[h0, w1]) + l1h (l0w x[h1, w0] + l1w x[h1, w1]).
/// `lanes` consecutive channels at a time (a channels-last x's contiguous C; 1 for a plane).
template <class T, class Acc>
void interpolate_row(const T* plane, std::int64_t sh, std::int64_t sw, std::int64_t lanes, const InterpolateGeometry& g,
                     const InterpolateSources<Acc>& s, std::int64_t oh, Acc* row) {
  if (g.mode == nn::InterpolateMode::nearest) {
    const T* xr = plane + s.h.i0[std::size_t(oh)] * sh;
    for (std::int64_t ow = 0; ow < g.w.out; ++ow) {
      const T* px = xr + s.w.i0[std::size_t(ow)] * sw;
      for (std::int64_t c = 0; c < lanes; ++c) row[ow * lanes + c] = Acc(px[c]);
    }
    return;
  }
  const std::size_t h = std::size_t(oh);
  const T* r0 = plane + s.h.i0[h] * sh;
  const T* r1 = plane + s.h.i1[h] * sh;
  const Acc l0h = s.h.l0[h], l1h = s.h.l1[h];
  for (std::int64_t ow = 0; ow < g.w.out; ++ow) {
    const std::size_t w = std::size_t(ow);
    const std::int64_t w0 = s.w.i0[w] * sw, w1 = s.w.i1[w] * sw;
    const Acc l0w = s.w.l0[w], l1w = s.w.l1[w];
    for (std::int64_t c = 0; c < lanes; ++c)
      row[ow * lanes + c] =
          l0h * (l0w * Acc(r0[w0 + c]) + l1w * Acc(r0[w1 + c])) + l1h * (l0w * Acc(r1[w0 + c]) + l1w * Acc(r1[w1 + c]));
  }
}

/// interpolate into a new contiguous NCHW tensor, x read in place: over N C planes, or for a
/// channels-last x over N OH rows (vectorized over the contiguous C).
template <class T>
Tensor<T> interpolate_impl(const TensorView<const T>& input, InterpolateAxis h, InterpolateAxis w,
                           nn::InterpolateMode mode, bool align_corners) {
  const char* op = "nn::interpolate";
  const Planes<T> x = planes_of(op, input);
  h.in = x.h, w.in = x.w;
  const InterpolateGeometry g = interpolate_geometry(op, input.shape(), h, w, mode, align_corners);
  using Acc = math_t<T>;
  const InterpolateSources<Acc> s = interpolate_sources<Acc>(g);
  const std::int64_t OH = g.h.out, OW = g.w.out;
  Tensor<T> out = empty<T>(Shape{x.n, x.c, OH, OW});
  T* o = out.data();
  if (x.channels_contiguous()) {
    const std::int64_t rows = x.n * OH, C = x.c;
    WEFT_PRAGMA_OMP(omp parallel num_threads(vision_threads(rows, OW * C * 4)))
    {
      std::vector<Acc> row(static_cast<std::size_t>(OW * C));
      WEFT_PRAGMA_OMP(omp for schedule(static))
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t n = r / OH, oh = r % OH;
        interpolate_row(x.plane(n, 0), x.sh, x.sw, C, g, s, oh, row.data());
        for (std::int64_t c = 0; c < C; ++c)
          for (std::int64_t ow = 0; ow < OW; ++ow)
            o[((n * C + c) * OH + oh) * OW + ow] = T(row[std::size_t(ow * C + c)]);
      }
    }
    return out;
  }
  const std::int64_t planes = x.n * x.c;
  WEFT_PRAGMA_OMP(omp parallel num_threads(vision_threads(planes, OH * OW * 4)))
  {
    std::vector<Acc> row(static_cast<std::size_t>(OW));
    WEFT_PRAGMA_OMP(omp for schedule(static))
    for (std::int64_t p = 0; p < planes; ++p)
      for (std::int64_t oh = 0; oh < OH; ++oh) {
        interpolate_row(x.plane(p / x.c, p % x.c), x.sh, x.sw, 1, g, s, oh, row.data());
        for (std::int64_t ow = 0; ow < OW; ++ow) o[(p * OH + oh) * OW + ow] = T(row[std::size_t(ow)]);
      }
  }
  return out;
}

/// The gradient of interpolate: each dy[oh, ow] scatter-added to the sources of (oh, ow) with
/// their weights (nearest: weight 1 to its one source; bilinear: l_h l_w to each of four).
template <class T>
Tensor<T> interpolate_backward_impl(const TensorView<const T>& dy, const Shape& input_shape, InterpolateAxis h,
                                    InterpolateAxis w, nn::InterpolateMode mode, bool align_corners) {
  const char* op = "nn::interpolate_backward";
  check_input_shape(op, input_shape);
  h.in = input_shape[2], w.in = input_shape[3];
  const InterpolateGeometry g = interpolate_geometry(op, input_shape, h, w, mode, align_corners);
  const Planes<T> d = gradient_planes(op, dy, Shape{input_shape[0], input_shape[1], g.h.out, g.w.out});
  using Acc = math_t<T>;
  const InterpolateSources<Acc> s = interpolate_sources<Acc>(g);
  const std::int64_t W = g.w.in;
  return accumulate_planes<T>(input_shape, g.h.out * g.w.out * 4, [&](std::int64_t p, Acc* dx) {
    const T* dyp = d.plane(p / d.c, p % d.c);
    for (std::int64_t oh = 0; oh < g.h.out; ++oh) {
      const std::size_t i = std::size_t(oh);
      for (std::int64_t ow = 0; ow < g.w.out; ++ow) {
        const std::size_t j = std::size_t(ow);
        const Acc grad = Acc(dyp[oh * d.sh + ow * d.sw]);
        if (g.mode == nn::InterpolateMode::nearest) {
          dx[s.h.i0[i] * W + s.w.i0[j]] += grad;
          continue;
        }
        dx[s.h.i0[i] * W + s.w.i0[j]] += s.h.l0[i] * s.w.l0[j] * grad;
        dx[s.h.i0[i] * W + s.w.i1[j]] += s.h.l0[i] * s.w.l1[j] * grad;
        dx[s.h.i1[i] * W + s.w.i0[j]] += s.h.l1[i] * s.w.l0[j] * grad;
        dx[s.h.i1[i] * W + s.w.i1[j]] += s.h.l1[i] * s.w.l1[j] * grad;
      }
    }
  });
}

/// interpolate over a Var, by size or by scale factors; the backward is interpolate_backward.
template <class T>
ad::Var<T> interpolate_recorded(const ad::detail::Input<T>& in, const std::array<InterpolateAxis, 2>& axes,
                                nn::InterpolateMode mode, bool align_corners) {
  return ad::detail::record_op<T>(
      "nn::interpolate", interpolate_impl<T>(in.value, axes[0], axes[1], mode, align_corners), std::array{in.node},
      ad::detail::SavedTensors(),
      [node = in.node, shape = in.value.shape(), axes, mode, align_corners](const Tensor<T>& g) {
        ad::detail::accumulate<T>(node, interpolate_backward_impl<T>(g, shape, axes[0], axes[1], mode, align_corners));
      });
}

/// The axes of a call by size, and of a call by scale factors.
inline std::array<InterpolateAxis, 2> sized_axes(nn::Size2 size) {
  return {InterpolateAxis{0, size.h, {}}, InterpolateAxis{0, size.w, {}}};
}
inline std::array<InterpolateAxis, 2> scaled_axes(double scale_h, double scale_w) {
  return {InterpolateAxis{0, 0, scale_h}, InterpolateAxis{0, 0, scale_w}};
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail

namespace weft::nn {
inline namespace WEFT_BACKEND_ABI {

/// interpolate(x, size, mode = nearest, align_corners = false)
/// (torch.nn.functional.interpolate(x, size=...)): x [N, C, H, W] -> [N, C, size.h, size.w]. With
/// step = in / out per dim (align_corners: (in - 1) / (out - 1)):
///   nearest:  y[oh, ow] = x[min(floor(oh step_h), H - 1), min(floor(ow step_w), W - 1)],
///   bilinear: y = the bilinear blend of the 4 inputs around the source position
///             (o + 1/2) step - 1/2 (clamped at 0), or o step with align_corners.
/// align_corners with nearest is an error, as in torch. x is read in place through its strides
/// (NCHW or channels-last); the result is a new contiguous NCHW tensor; 16-bit floats compute in
/// float. Note `interpolate(x, 8)` is a size and `interpolate(x, 2.0, 2.0)` scale factors.
template <Operand X>
requires HasTensorOperand<X> Tensor<weft::detail::operand_dtype_t<X>> interpolate(
    const X& x, Size2 size, InterpolateMode mode = InterpolateMode::nearest, bool align_corners = false) {
  using T = weft::detail::operand_dtype_t<X>;
  weft::detail::check_vision_dtype<T>();
  const auto [h, w] = weft::detail::sized_axes(size);
  return weft::detail::interpolate_impl<T>(weft::detail::materialize(x), h, w, mode, align_corners);
}

/// interpolate(x, scale_h, scale_w, mode, align_corners) (torch's scale_factor, with
/// recompute_scale_factor = None): the output is floor(H scale_h) x floor(W scale_w), and the
/// source step is 1 / scale (not in / out) unless align_corners, as torch does.
template <Operand X>
requires HasTensorOperand<X> Tensor<weft::detail::operand_dtype_t<X>> interpolate(
    const X& x, double scale_h, double scale_w, InterpolateMode mode = InterpolateMode::nearest,
    bool align_corners = false) {
  using T = weft::detail::operand_dtype_t<X>;
  weft::detail::check_vision_dtype<T>();
  const auto [h, w] = weft::detail::scaled_axes(scale_h, scale_w);
  return weft::detail::interpolate_impl<T>(weft::detail::materialize(x), h, w, mode, align_corners);
}

/// The gradient of interpolate(x, size = dy's [H', W'], mode, align_corners) with respect to x of
/// shape input_shape: each dy element scatter-added to its sources with their weights. A new
/// contiguous NCHW tensor; 16-bit floats accumulate in float.
template <Operand GradY>
requires HasTensorOperand<GradY> Tensor<weft::detail::operand_dtype_t<GradY>> interpolate_backward(
    const GradY& dy, const Shape& input_shape, InterpolateMode mode = InterpolateMode::nearest,
    bool align_corners = false) {
  using T = weft::detail::operand_dtype_t<GradY>;
  weft::detail::check_vision_dtype<T>();
  const TensorView<const T> d = weft::detail::materialize(dy);
  const auto [h, w] = weft::detail::sized_axes(d.dim() == 4 ? Size2(d.shape()[2], d.shape()[3]) : Size2(0));
  return weft::detail::interpolate_backward_impl<T>(d, input_shape, h, w, mode, align_corners);
}

/// The gradient of interpolate(x, scale_h, scale_w, mode, align_corners).
template <Operand GradY>
requires HasTensorOperand<GradY> Tensor<weft::detail::operand_dtype_t<GradY>> interpolate_backward(
    const GradY& dy, const Shape& input_shape, double scale_h, double scale_w,
    InterpolateMode mode = InterpolateMode::nearest, bool align_corners = false) {
  using T = weft::detail::operand_dtype_t<GradY>;
  weft::detail::check_vision_dtype<T>();
  const auto [h, w] = weft::detail::scaled_axes(scale_h, scale_w);
  return weft::detail::interpolate_backward_impl<T>(weft::detail::materialize(dy), input_shape, h, w, mode,
                                                    align_corners);
}

/// interpolate(x, size, mode, align_corners) over a Var.
template <class X>
requires ad::detail::AdOperands<X>
auto interpolate(const X& x, Size2 size, InterpolateMode mode = InterpolateMode::nearest, bool align_corners = false) {
  using T = ad::detail::input_dtype_t<X>;
  weft::detail::check_vision_dtype<T>();
  return weft::detail::interpolate_recorded<T>(ad::detail::input<T>(x), weft::detail::sized_axes(size), mode,
                                               align_corners);
}

/// interpolate(x, scale_h, scale_w, mode, align_corners) over a Var.
template <class X>
requires ad::detail::AdOperands<X>
auto interpolate(const X& x, double scale_h, double scale_w, InterpolateMode mode = InterpolateMode::nearest,
                 bool align_corners = false) {
  using T = ad::detail::input_dtype_t<X>;
  weft::detail::check_vision_dtype<T>();
  return weft::detail::interpolate_recorded<T>(ad::detail::input<T>(x), weft::detail::scaled_axes(scale_h, scale_w),
                                               mode, align_corners);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn

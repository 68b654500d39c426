// SPDX-License-Identifier: MIT
/// @file nn::max_pool2d, avg_pool2d and adaptive_avg_pool2d (torch.nn.functional's), their backward on tensors and their autograd forms over Vars.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/ad/record.hpp"
#include "weft/nn/vision_planes.hpp"
#include "weft/ops/materialize.hpp"

namespace weft::nn {

/// max_pool2d's values and, per output, the flat index ih W + iw of its maximum in the input
/// plane [H, W] (torch's return_indices = true).
template <class T>
struct MaxPool2dResult {
  Tensor<T> values;
  Tensor<std::int64_t> indices;
};

}  // namespace weft::nn

namespace weft::detail {
inline namespace WEFT_BACKEND_ABI {

/// One spatial dim of a pooling: input extent, output extent, kernel, stride, padding, dilation.
/// Output o's window reads the inputs o stride - padding + k dilation, k in [0, kernel).
struct PoolAxis {
  std::int64_t in = 0, out = 0, kernel = 1, stride = 1, padding = 0, dilation = 1;
  std::int64_t start(std::int64_t o) const { return o * stride - padding; }
};

struct PoolGeometry {
  PoolAxis h, w;
};

/// torch's pooling output size: floor or (ceil_mode) ceil of (in + 2 p - d (k - 1) - 1) / s, plus
/// 1; in ceil mode a last window that would start in the right padding is dropped (it must start
/// inside the input or the left padding).
inline std::int64_t pool_output_size(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p, std::int64_t d,
                                     bool ceil_mode) {
  const std::int64_t span = in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
  std::int64_t out = (span >= 0 ? span / s : -((-span + s - 1) / s)) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

/// Checks a pooling's arguments against x's shape [N, C, H, W] as torch does (positive kernel,
/// stride and dilation, padding at most half the kernel, at least one output per dim) and
/// returns its geometry.
inline PoolGeometry pool_geometry(const char* op, const Shape& x, nn::Size2 kernel, nn::Size2 stride, nn::Size2 padding,
                                  nn::Size2 dilation, bool ceil_mode) {
  auto pair = [](nn::Size2 s) { return cat(s.h, "x", s.w); };
  if (x[1] == 0 || x[2] == 0 || x[3] == 0) fail(op, "x of shape ", x, " has an empty C, H or W; only N may be 0");
  if (kernel.h <= 0 || kernel.w <= 0) fail(op, "kernel ", pair(kernel), " must be positive (x of shape ", x, ")");
  if (stride.h <= 0 || stride.w <= 0) fail(op, "stride ", pair(stride), " must be positive (x of shape ", x, ")");
  if (dilation.h <= 0 || dilation.w <= 0)
    fail(op, "dilation ", pair(dilation), " must be positive (x of shape ", x, ")");
  if (padding.h < 0 || padding.w < 0 || padding.h > kernel.h / 2 || padding.w > kernel.w / 2)
    fail(op, "padding ", pair(padding), " must be in [0, kernel / 2] for kernel ", pair(kernel), " (x of shape ", x,
         "); use a larger kernel or less padding");
  PoolGeometry g{{x[2], 0, kernel.h, stride.h, padding.h, dilation.h},
                 {x[3], 0, kernel.w, stride.w, padding.w, dilation.w}};
  g.h.out = pool_output_size(g.h.in, kernel.h, stride.h, padding.h, dilation.h, ceil_mode);
  g.w.out = pool_output_size(g.w.in, kernel.w, stride.w, padding.w, dilation.w, ceil_mode);
  if (g.h.out < 1 || g.w.out < 1)
    fail(op, "kernel ", pair(kernel), " with dilation ", pair(dilation), " spans ", dilation.h * (kernel.h - 1) + 1,
         "x", dilation.w * (kernel.w - 1) + 1, ", larger than the padded input ", g.h.in + 2 * padding.h, "x",
         g.w.in + 2 * padding.w, " (x of shape ", x, "); use a smaller kernel or more padding");
  return g;
}

/// Calls visit(ih, offset, outputs, tap) for each kernel tap (kh, kw), numbered tap = kh kW + kw,
/// of output row oh whose input row ih is inside the input: the outputs ow in `outputs` read
/// input column ow stride + offset (the others fall in the padding). Taps come in torch's order
/// (kh, then kw).
template <class Visit>
void for_each_tap(const PoolGeometry& g, std::int64_t oh, Visit&& visit) {
  for (std::int64_t kh = 0; kh < g.h.kernel; ++kh) {
    const std::int64_t ih = g.h.start(oh) + kh * g.h.dilation;
    if (ih < 0 || ih >= g.h.in) continue;
    for (std::int64_t kw = 0; kw < g.w.kernel; ++kw) {
      const std::int64_t offset = kw * g.w.dilation - g.w.padding;
      const OutputRange r = outputs_inside(offset, g.w.stride, g.w.in, g.w.out);
      if (r.lo < r.hi) visit(ih, offset, r, std::int32_t(kh * g.w.kernel + kw));
    }
  }
}

/// Per output of an axis, the first input its window reads (torch's start index of the argmax
/// before any element beats -inf): the window start stepped past the left padding by dilations.
inline std::vector<std::int64_t> first_inputs(const PoolAxis& a) {
  std::vector<std::int64_t> first(std::size_t(a.out));
  for (std::int64_t o = 0; o < a.out; ++o) {
    std::int64_t i = a.start(o);
    while (i < 0) i += a.dilation;
    first[std::size_t(o)] = i;
  }
  return first;
}

/// avg_pool2d's divisor per output of an axis (torch's): the window clipped to the padded input
/// (count_include_pad) or to the input; 0 where the window holds no input (that output is 0).
inline std::vector<std::int64_t> average_divisors(const PoolAxis& a, bool count_include_pad) {
  std::vector<std::int64_t> d(std::size_t(a.out));
  for (std::int64_t o = 0; o < a.out; ++o) {
    const std::int64_t lo = a.start(o), hi = std::min(lo + a.kernel, a.in + a.padding);
    const std::int64_t inside = std::min(hi, a.in) - std::max<std::int64_t>(lo, 0);
    d[std::size_t(o)] = inside <= 0 ? 0 : count_include_pad ? hi - lo : inside;
  }
  return d;
}

enum class PoolReduction { max, average };

/// What max_pool2d and avg_pool2d write: values [N, C, OH, OW] contiguous, the argmax indices
/// (max with indices only), the divisors of avg_pool2d per output row and column.
template <class T>
struct PoolOutputs {
  T* values;
  std::int64_t* indices;
  std::vector<std::int64_t> div_h, div_w;
};

/// Where a pooling row's inputs lie: a plane read with a window step of one contiguous element
/// (stride 1, unit column stride), any other plane, or the C contiguous channels of a
/// channels-last input (lanes: C values per output position).
enum class PoolRowLayout { plane_unit_step, plane, channels };

/// One output row of pooling for one plane (or, over channels, a channels-last row): `acc` and
/// `arg` hold OW (x lanes) running values and the tap of each argmax (-1: none yet; a tap number
/// has the values' width, so its select vectorizes with theirs); the taps update them in torch's
/// order. max: m = x where x > m or x is NaN (a NaN wins, a tie keeps the first), else the sum.
/// The innermost loop runs over contiguous inputs (W for plane_unit_step, C for channels) with
/// selects, not branches (`|`, not `||`), so the compiler vectorizes it (blends): random data
/// would mispredict a branch half the time.
template <PoolReduction kReduce, bool kIndices, PoolRowLayout kLayout, class T, class Acc>
void pool_row(const T* plane, std::int64_t sh, std::int64_t sw, std::int64_t channels, const PoolGeometry& g,
              std::int64_t oh, Acc* acc, std::int32_t* arg) {
  constexpr bool kUnitStep = kLayout == PoolRowLayout::plane_unit_step;
  const std::int64_t lanes = kLayout == PoolRowLayout::channels ? channels : 1;
  for_each_tap(g, oh, [&](std::int64_t ih, std::int64_t offset, OutputRange r, std::int32_t tap) {
    const T* row = plane + ih * sh;
    for (std::int64_t ow = r.lo; ow < r.hi; ++ow) {
      const std::int64_t iw = kUnitStep ? ow + offset : ow * g.w.stride + offset;
      const T* px = row + (kUnitStep ? iw : iw * sw);
      for (std::int64_t c = 0; c < lanes; ++c) {
        const std::int64_t k = ow * lanes + c;
        const Acc v = Acc(px[c]);
        if constexpr (kReduce == PoolReduction::max) {
          const bool take = (v > acc[k]) | (v != v);
          acc[k] = take ? v : acc[k];
          if constexpr (kIndices) arg[k] = take ? tap : arg[k];
        } else {
          acc[k] += v;
        }
      }
    }
  });
}

/// pool_row with the argmax kept where `arg` is given (max only).
template <PoolReduction kReduce, PoolRowLayout kLayout, class T, class Acc>
void pool_row_of(const T* plane, std::int64_t sh, std::int64_t sw, std::int64_t channels, const PoolGeometry& g,
                 std::int64_t oh, Acc* acc, std::int32_t* arg) {
  if (kReduce == PoolReduction::max && arg) pool_row<kReduce, true, kLayout>(plane, sh, sw, channels, g, oh, acc, arg);
  else pool_row<kReduce, false, kLayout>(plane, sh, sw, channels, g, oh, acc, arg);
}

/// Max or average pooling of x into `out`, in place over x's strides: over N C planes (a row of
/// OW outputs at a time, vectorized over W when the window steps by one contiguous element), or
/// for a channels-last x over N OH rows (vectorized over the contiguous C).
template <PoolReduction kReduce, class T>
void run_pool2d(const Planes<T>& x, const PoolGeometry& g, const PoolOutputs<T>& out) {
  using Acc = math_t<T>;
  const std::int64_t OH = g.h.out, OW = g.w.out, plane_size = OH * OW;
  const std::vector<std::int64_t> first_h = first_inputs(g.h), first_w = first_inputs(g.w);
  const Acc init = kReduce == PoolReduction::max ? -std::numeric_limits<Acc>::infinity() : Acc(0);
  // tap kh kW + kw reads the input kh dH W + kw dW past its window's start
  std::vector<std::int64_t> tap_offset;
  for (std::int64_t kh = 0; kh < g.h.kernel; ++kh)
    for (std::int64_t kw = 0; kw < g.w.kernel; ++kw)
      tap_offset.push_back(kh * g.h.dilation * g.w.in + kw * g.w.dilation);
  // Writes output (oh, ow) of plane p from its accumulated value (and argmax tap: its input
  // ih W + iw; no tap, torch's index of the window's first position past the padding).
  auto finish = [&](std::int64_t p, std::int64_t oh, std::int64_t ow, Acc v, std::int32_t tap) {
    const std::int64_t o = p * plane_size + oh * OW + ow;
    if constexpr (kReduce == PoolReduction::max) {
      out.values[o] = T(v);
      if (out.indices)
        out.indices[o] = tap < 0 ? first_h[std::size_t(oh)] * g.w.in + first_w[std::size_t(ow)]
                                 : g.h.start(oh) * g.w.in + g.w.start(ow) + tap_offset[std::size_t(tap)];
    } else {
      const std::int64_t d = out.div_h[std::size_t(oh)] * out.div_w[std::size_t(ow)];
      out.values[o] = d == 0 ? T(0) : T(v / Acc(d));
    }
  };
  auto start_row = [&](std::vector<Acc>& acc, std::vector<std::int32_t>& arg) {
    std::fill(acc.begin(), acc.end(), init);
    std::fill(arg.begin(), arg.end(), -1);
  };
  const std::int64_t taps [[maybe_unused]] = g.h.kernel * g.w.kernel;  // read by the OpenMP clauses only
  const bool want_arg = kReduce == PoolReduction::max && out.indices;
  if (x.channels_contiguous()) {
    const std::int64_t rows = x.n * OH, C = x.c;
    WEFT_PRAGMA_OMP(omp parallel num_threads(vision_threads(rows, OW * C * taps)))
    {
      std::vector<Acc> acc(std::size_t(OW * C));
      std::vector<std::int32_t> arg(want_arg ? std::size_t(OW * C) : 0);
      WEFT_PRAGMA_OMP(omp for schedule(static))
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t n = r / OH, oh = r % OH;
        start_row(acc, arg);
        pool_row_of<kReduce, PoolRowLayout::channels>(x.plane(n, 0), x.sh, x.sw, C, g, oh, acc.data(),
                                                      want_arg ? arg.data() : nullptr);
        for (std::int64_t c = 0; c < C; ++c)
          for (std::int64_t ow = 0; ow < OW; ++ow)
            finish(n * C + c, oh, ow, acc[std::size_t(ow * C + c)], want_arg ? arg[std::size_t(ow * C + c)] : 0);
      }
    }
    return;
  }
  const std::int64_t planes = x.n * x.c;
  const bool unit_step = x.sw == 1 && g.w.stride == 1;
  WEFT_PRAGMA_OMP(omp parallel num_threads(vision_threads(planes, plane_size * taps)))
  {
    std::vector<Acc> acc(static_cast<std::size_t>(OW));
    std::vector<std::int32_t> arg(want_arg ? std::size_t(OW) : 0);
    WEFT_PRAGMA_OMP(omp for schedule(static))
    for (std::int64_t p = 0; p < planes; ++p) {
      const T* plane = x.plane(p / x.c, p % x.c);
      for (std::int64_t oh = 0; oh < OH; ++oh) {
        start_row(acc, arg);
        std::int32_t* a = want_arg ? arg.data() : nullptr;
        if (unit_step) pool_row_of<kReduce, PoolRowLayout::plane_unit_step>(plane, x.sh, x.sw, 1, g, oh, acc.data(), a);
        else pool_row_of<kReduce, PoolRowLayout::plane>(plane, x.sh, x.sw, 1, g, oh, acc.data(), a);
        for (std::int64_t ow = 0; ow < OW; ++ow)
          finish(p, oh, ow, acc[std::size_t(ow)], want_arg ? arg[std::size_t(ow)] : 0);
      }
    }
  }
}

template <class T>
nn::MaxPool2dResult<T> max_pool2d_impl(const TensorView<const T>& input, nn::Size2 kernel,
                                       std::optional<nn::Size2> stride, nn::Size2 padding, nn::Size2 dilation,
                                       bool ceil_mode, bool with_indices) {
  const char* op = "nn::max_pool2d";
  const Planes<T> x = planes_of(op, input);
  const PoolGeometry g =
      pool_geometry(op, input.shape(), kernel, stride.value_or(kernel), padding, dilation, ceil_mode);
  const Shape out_shape{x.n, x.c, g.h.out, g.w.out};
  nn::MaxPool2dResult<T> r{empty<T>(out_shape), with_indices ? empty<std::int64_t>(out_shape) : Tensor<std::int64_t>()};
  run_pool2d<PoolReduction::max>(x, g,
                                 PoolOutputs<T>{r.values.data(), with_indices ? r.indices.data() : nullptr, {}, {}});
  return r;
}

template <class T>
Tensor<T> avg_pool2d_impl(const TensorView<const T>& input, nn::Size2 kernel, std::optional<nn::Size2> stride,
                          nn::Size2 padding, bool ceil_mode, bool count_include_pad) {
  const char* op = "nn::avg_pool2d";
  const Planes<T> x = planes_of(op, input);
  const PoolGeometry g = pool_geometry(op, input.shape(), kernel, stride.value_or(kernel), padding, 1, ceil_mode);
  Tensor<T> out = empty<T>(Shape{x.n, x.c, g.h.out, g.w.out});
  run_pool2d<PoolReduction::average>(x, g,
                                     PoolOutputs<T>{out.data(), nullptr, average_divisors(g.h, count_include_pad),
                                                    average_divisors(g.w, count_include_pad)});
  return out;
}

template <class T>
Tensor<T> max_pool2d_backward_impl(const TensorView<const T>& dy, const TensorView<const std::int64_t>& indices,
                                   const Shape& input_shape) {
  const char* op = "nn::max_pool2d_backward";
  check_input_shape(op, input_shape);
  if (!indices.defined() || !(indices.shape() == dy.shape()) || indices.dim() != 4 ||
      indices.shape()[0] != input_shape[0] || indices.shape()[1] != input_shape[1])
    fail(op, "indices of shape ", indices.defined() ? indices.shape() : Shape{}, " and dy of shape ", dy.shape(),
         " do not fit input_shape ", input_shape,
         "; pass max_pool2d_with_indices's indices, its output's gradient and its input's shape");
  const Planes<T> g = gradient_planes(op, dy, indices.shape());
  const Planes<std::int64_t> at = planes_of(op, indices);
  const std::int64_t plane_size = input_shape[2] * input_shape[3], OH = g.h, OW = g.w;
  for (std::int64_t p = 0; p < g.n * g.c; ++p)
    for (std::int64_t oh = 0; oh < OH; ++oh)
      for (std::int64_t ow = 0; ow < OW; ++ow) {
        const std::int64_t i = at.plane(p / g.c, p % g.c)[oh * at.sh + ow * at.sw];
        if (i < 0)
          fail(op, "index ", i, " at output (", p / g.c, ", ", p % g.c, ", ", oh, ", ", ow,
               ") is negative; indices are ", "flat positions ih W + iw in the input plane ", input_shape[2], "x",
               input_shape[3], ", as max_pool2d_with_indices returns them");
      }
  using Acc = math_t<T>;
  // dx[i] = sum of dy over the outputs whose maximum was input i. An index past the plane is
  // torch's index of a window that holds no input (dilated, in the padding): no input to add to.
  return accumulate_planes<T>(input_shape, OH * OW, [&](std::int64_t p, Acc* dx) {
    const T* dyp = g.plane(p / g.c, p % g.c);
    const std::int64_t* ip = at.plane(p / g.c, p % g.c);
    for (std::int64_t oh = 0; oh < OH; ++oh)
      for (std::int64_t ow = 0; ow < OW; ++ow) {
        const std::int64_t i = ip[oh * at.sh + ow * at.sw];
        if (i < plane_size) dx[i] += Acc(dyp[oh * g.sh + ow * g.sw]);
      }
  });
}

template <class T>
Tensor<T> avg_pool2d_backward_impl(const TensorView<const T>& dy, const Shape& input_shape, nn::Size2 kernel,
                                   std::optional<nn::Size2> stride, nn::Size2 padding, bool ceil_mode,
                                   bool count_include_pad) {
  const char* op = "nn::avg_pool2d_backward";
  check_input_shape(op, input_shape);
  const PoolGeometry geo = pool_geometry(op, input_shape, kernel, stride.value_or(kernel), padding, 1, ceil_mode);
  const Planes<T> g = gradient_planes(op, dy, Shape{input_shape[0], input_shape[1], geo.h.out, geo.w.out});
  const std::vector<std::int64_t> div_h = average_divisors(geo.h, count_include_pad),
                                  div_w = average_divisors(geo.w, count_include_pad);
  using Acc = math_t<T>;
  const std::int64_t OW = geo.w.out, W = geo.w.in;
  // dx[ih, iw] = sum over the windows holding (ih, iw) of dy[oh, ow] / divisor(oh, ow)
  return accumulate_planes<T>(input_shape, geo.h.out * OW * kernel.h * kernel.w, [&](std::int64_t p, Acc* dx) {
    const T* dyp = g.plane(p / g.c, p % g.c);
    std::vector<Acc> delta(static_cast<std::size_t>(OW));
    for (std::int64_t oh = 0; oh < geo.h.out; ++oh) {
      for (std::int64_t ow = 0; ow < OW; ++ow) {
        const std::int64_t d = div_h[std::size_t(oh)] * div_w[std::size_t(ow)];
        delta[std::size_t(ow)] = d == 0 ? Acc(0) : Acc(dyp[oh * g.sh + ow * g.sw]) / Acc(d);
      }
      for_each_tap(geo, oh, [&](std::int64_t ih, std::int64_t offset, OutputRange r, std::int32_t) {
        Acc* row = dx + ih * W;
        for (std::int64_t ow = r.lo; ow < r.hi; ++ow) row[ow * geo.w.stride + offset] += delta[std::size_t(ow)];
      });
    }
  });
}

/// adaptive_avg_pool2d's window of output o along a dim of `in` inputs split into `out`:
/// [floor(o in / out), ceil((o + 1) in / out)) (torch's start and end index).
struct AdaptiveWindow {
  std::int64_t lo, hi;
};
inline AdaptiveWindow adaptive_window(std::int64_t o, std::int64_t in, std::int64_t out) {
  return {o * in / out, ((o + 1) * in + out - 1) / out};
}

inline void check_adaptive_size(const char* op, const Shape& x, nn::Size2 output_size) {
  if (x[1] == 0 || x[2] == 0 || x[3] == 0) fail(op, "x of shape ", x, " has an empty C, H or W; only N may be 0");
  if (output_size.h < 0 || output_size.w < 0)
    fail(op, "output_size ", output_size.h, "x", output_size.w, " must be >= 0 (x of shape ", x, ")");
}

/// The sum of n contiguous values in the compute type Acc, as 16 interleaved partial sums added
/// at the end (a fixed order, so the compiler vectorizes the loop and every run gives the same
/// bits), the last n mod 16 values added one by one.
template <class Acc, class T>
Acc contiguous_sum(const T* x, std::int64_t n) {
  constexpr std::int64_t kLanes = 16;
  Acc part[kLanes] = {};
  std::int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (std::int64_t l = 0; l < kLanes; ++l) part[l] += Acc(x[j + l]);
  Acc sum = 0;
  for (; j < n; ++j) sum += Acc(x[j]);
  for (std::int64_t l = 0; l < kLanes; ++l) sum += part[l];
  return sum;
}

/// out[oh, ow] = the mean of x over the window rows x columns of (oh, ow): over N C planes
/// (contiguous runs of a row, or of whole rows, summed vectorized), or for a channels-last x over
/// N OH rows, summing C contiguous channels at a time.
template <class T>
Tensor<T> adaptive_avg_pool2d_impl(const TensorView<const T>& input, nn::Size2 output_size) {
  const char* op = "nn::adaptive_avg_pool2d";
  const Planes<T> x = planes_of(op, input);
  check_adaptive_size(op, input.shape(), output_size);
  using Acc = math_t<T>;
  const std::int64_t OH = output_size.h, OW = output_size.w;
  Tensor<T> out = empty<T>(Shape{x.n, x.c, OH, OW});
  T* o = out.data();
  if (x.channels_contiguous()) {
    const std::int64_t rows = x.n * OH, C = x.c;
    WEFT_PRAGMA_OMP(omp parallel num_threads(vision_threads(rows, x.h * x.w * C / std::max<std::int64_t>(OH, 1))))
    {
      std::vector<Acc> acc(static_cast<std::size_t>(C));
      WEFT_PRAGMA_OMP(omp for schedule(static))
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t n = r / OH, oh = r % OH;
        const AdaptiveWindow wh = adaptive_window(oh, x.h, OH);
        for (std::int64_t ow = 0; ow < OW; ++ow) {
          const AdaptiveWindow ww = adaptive_window(ow, x.w, OW);
          std::fill(acc.begin(), acc.end(), Acc(0));
          for (std::int64_t ih = wh.lo; ih < wh.hi; ++ih)
            for (std::int64_t iw = ww.lo; iw < ww.hi; ++iw) {
              const T* px = x.plane(n, 0) + ih * x.sh + iw * x.sw;
              for (std::int64_t c = 0; c < C; ++c) acc[std::size_t(c)] += Acc(px[c]);
            }
          const Acc count = Acc((wh.hi - wh.lo) * (ww.hi - ww.lo));
          for (std::int64_t c = 0; c < C; ++c) o[((n * C + c) * OH + oh) * OW + ow] = T(acc[std::size_t(c)] / count);
        }
      }
    }
    return out;
  }
  const std::int64_t planes = x.n * x.c;
  // rows of a plane that follow each other in memory: a window of whole rows is one run
  const bool rows_adjacent = x.sw == 1 && x.sh == x.w;
  WEFT_PRAGMA_OMP(omp parallel for schedule(static) num_threads(vision_threads(planes, x.h * x.w)))
  for (std::int64_t p = 0; p < planes; ++p) {
    const T* plane = x.plane(p / x.c, p % x.c);
    for (std::int64_t oh = 0; oh < OH; ++oh) {
      const AdaptiveWindow wh = adaptive_window(oh, x.h, OH);
      for (std::int64_t ow = 0; ow < OW; ++ow) {
        const AdaptiveWindow ww = adaptive_window(ow, x.w, OW);
        Acc sum = 0;
        if (rows_adjacent && ww.hi - ww.lo == x.w) {
          sum = contiguous_sum<Acc>(plane + wh.lo * x.sh, (wh.hi - wh.lo) * x.w);
        } else if (x.sw == 1) {
          for (std::int64_t ih = wh.lo; ih < wh.hi; ++ih)
            sum += contiguous_sum<Acc>(plane + ih * x.sh + ww.lo, ww.hi - ww.lo);
        } else {
          for (std::int64_t ih = wh.lo; ih < wh.hi; ++ih)
            for (std::int64_t iw = ww.lo; iw < ww.hi; ++iw) sum += Acc(plane[ih * x.sh + iw * x.sw]);
        }
        o[(p * OH + oh) * OW + ow] = T(sum / Acc((wh.hi - wh.lo) * (ww.hi - ww.lo)));
      }
    }
  }
  return out;
}

template <class T>
Tensor<T> adaptive_avg_pool2d_backward_impl(const TensorView<const T>& dy, const Shape& input_shape) {
  const char* op = "nn::adaptive_avg_pool2d_backward";
  check_input_shape(op, input_shape);
  if (dy.defined() && dy.dim() == 4) check_adaptive_size(op, input_shape, nn::Size2(dy.shape()[2], dy.shape()[3]));
  const Planes<T> g = gradient_planes(
      op, dy,
      Shape{input_shape[0], input_shape[1], dy.dim() == 4 ? dy.shape()[2] : 0, dy.dim() == 4 ? dy.shape()[3] : 0});
  using Acc = math_t<T>;
  const std::int64_t H = input_shape[2], W = input_shape[3];
  // dx[ih, iw] = sum over the windows holding (ih, iw) of dy[oh, ow] / (window's element count)
  return accumulate_planes<T>(input_shape, H * W, [&](std::int64_t p, Acc* dx) {
    const T* dyp = g.plane(p / g.c, p % g.c);
    for (std::int64_t oh = 0; oh < g.h; ++oh) {
      const AdaptiveWindow wh = adaptive_window(oh, H, g.h);
      for (std::int64_t ow = 0; ow < g.w; ++ow) {
        const AdaptiveWindow ww = adaptive_window(ow, W, g.w);
        const Acc delta = Acc(dyp[oh * g.sh + ow * g.sw]) / Acc((wh.hi - wh.lo) * (ww.hi - ww.lo));
        for (std::int64_t ih = wh.lo; ih < wh.hi; ++ih)
          for (std::int64_t iw = ww.lo; iw < ww.hi; ++iw) dx[ih * W + iw] += delta;
      }
    }
  });
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail

namespace weft::nn {
inline namespace WEFT_BACKEND_ABI {

/// max_pool2d(x, kernel, stride = kernel, padding = 0, dilation = 1, ceil_mode = false)
/// (torch.nn.functional.max_pool2d): x [N, C, H, W] -> [N, C, OH, OW],
///   y[n, c, oh, ow] = max over kh < kH, kw < kW of x[n, c, oh sH - pH + kh dH, ow sW - pW + kw dW]
/// (positions in the padding excluded), OH = floor((H + 2 pH - dH (kH - 1) - 1) / sH) + 1 (ceil
/// in ceil_mode, dropping a last window that would start in the right padding); likewise OW.
/// A NaN in a window wins (torch's rule). x is read in place through its strides (NCHW or
/// channels-last); the result is a new contiguous NCHW tensor. Padding must be at most half the
/// kernel. Expressions are evaluated first.
template <Operand X>
requires HasTensorOperand<X> Tensor<weft::detail::operand_dtype_t<X>> max_pool2d(const X& x, Size2 kernel,
                                                                                 std::optional<Size2> stride = {},
                                                                                 Size2 padding = 0, Size2 dilation = 1,
                                                                                 bool ceil_mode = false) {
  using T = weft::detail::operand_dtype_t<X>;
  weft::detail::check_vision_dtype<T>();
  return weft::detail::max_pool2d_impl<T>(weft::detail::materialize(x), kernel, stride, padding, dilation, ceil_mode,
                                          false)
      .values;
}

/// max_pool2d and the flat index ih W + iw of each maximum in its input plane [H, W] (torch's
/// return_indices = true; the first of equal maxima, the last NaN).
template <Operand X>
requires HasTensorOperand<X> MaxPool2dResult<weft::detail::operand_dtype_t<X>> max_pool2d_with_indices(
    const X& x, Size2 kernel, std::optional<Size2> stride = {}, Size2 padding = 0, Size2 dilation = 1,
    bool ceil_mode = false) {
  using T = weft::detail::operand_dtype_t<X>;
  weft::detail::check_vision_dtype<T>();
  return weft::detail::max_pool2d_impl<T>(weft::detail::materialize(x), kernel, stride, padding, dilation, ceil_mode,
                                          true);
}

/// The gradient of max_pool2d with respect to x of shape input_shape [N, C, H, W]: dy
/// scatter-added at the indices max_pool2d_with_indices returned, dx[n, c, i] = sum of
/// dy[n, c, o] over the outputs o with indices[n, c, o] = i (an index past the plane, torch's for
/// a dilated window that holds no input, adds nothing). A new contiguous NCHW tensor; 16-bit
/// floats accumulate in float.
template <Operand GradY>
requires HasTensorOperand<GradY> Tensor<weft::detail::operand_dtype_t<GradY>> max_pool2d_backward(
    const GradY& dy, const TensorView<const std::int64_t>& indices, const Shape& input_shape) {
  using T = weft::detail::operand_dtype_t<GradY>;
  weft::detail::check_vision_dtype<T>();
  return weft::detail::max_pool2d_backward_impl<T>(weft::detail::materialize(dy), indices, input_shape);
}

/// avg_pool2d(x, kernel, stride = kernel, padding = 0, ceil_mode = false, count_include_pad =
/// true) (torch.nn.functional.avg_pool2d): y[n, c, oh, ow] = (sum of x over the window's inputs)
/// / divisor; the window [oh sH - pH, + kH) x [ow sW - pW, + kW) clipped to the padded input, its
/// size the divisor with count_include_pad, else the count of its inputs (a window with none
/// gives 0). Output size as max_pool2d's with dilation 1; layouts and evaluation as max_pool2d.
template <Operand X>
requires HasTensorOperand<X> Tensor<weft::detail::operand_dtype_t<X>> avg_pool2d(const X& x, Size2 kernel,
                                                                                 std::optional<Size2> stride = {},
                                                                                 Size2 padding = 0,
                                                                                 bool ceil_mode = false,
                                                                                 bool count_include_pad = true) {
  using T = weft::detail::operand_dtype_t<X>;
  weft::detail::check_vision_dtype<T>();
  return weft::detail::avg_pool2d_impl<T>(weft::detail::materialize(x), kernel, stride, padding, ceil_mode,
                                          count_include_pad);
}

/// The gradient of avg_pool2d (same arguments) with respect to x of shape input_shape:
/// dx[ih, iw] = sum over the windows that hold (ih, iw) of dy[oh, ow] / divisor(oh, ow).
template <Operand GradY>
requires HasTensorOperand<GradY> Tensor<weft::detail::operand_dtype_t<GradY>> avg_pool2d_backward(
    const GradY& dy, const Shape& input_shape, Size2 kernel, std::optional<Size2> stride = {}, Size2 padding = 0,
    bool ceil_mode = false, bool count_include_pad = true) {
  using T = weft::detail::operand_dtype_t<GradY>;
  weft::detail::check_vision_dtype<T>();
  return weft::detail::avg_pool2d_backward_impl<T>(weft::detail::materialize(dy), input_shape, kernel, stride, padding,
                                                   ceil_mode, count_include_pad);
}

/// adaptive_avg_pool2d(x, output_size) (torch.nn.functional.adaptive_avg_pool2d): output
/// (oh, ow) is the mean of x over rows [floor(oh H / OH), ceil((oh + 1) H / OH)) and columns
/// [floor(ow W / OW), ceil((ow + 1) W / OW)) (windows overlap when OH does not divide H).
/// `output_size` 1 is global average pooling. Layouts and evaluation as max_pool2d.
template <Operand X>
requires HasTensorOperand<X> Tensor<weft::detail::operand_dtype_t<X>> adaptive_avg_pool2d(const X& x,
                                                                                          Size2 output_size) {
  using T = weft::detail::operand_dtype_t<X>;
  weft::detail::check_vision_dtype<T>();
  return weft::detail::adaptive_avg_pool2d_impl<T>(weft::detail::materialize(x), output_size);
}

/// The gradient of adaptive_avg_pool2d with respect to x of shape input_shape (dy's shape gives
/// the output size): dx[ih, iw] = sum over the windows holding (ih, iw) of dy / window size.
template <Operand GradY>
requires HasTensorOperand<GradY> Tensor<weft::detail::operand_dtype_t<GradY>> adaptive_avg_pool2d_backward(
    const GradY& dy, const Shape& input_shape) {
  using T = weft::detail::operand_dtype_t<GradY>;
  weft::detail::check_vision_dtype<T>();
  return weft::detail::adaptive_avg_pool2d_backward_impl<T>(weft::detail::materialize(dy), input_shape);
}

/// max_pool2d over a Var: records the argmax indices; the backward scatter-adds the gradient
/// there (max_pool2d_backward).
template <class X>
requires ad::detail::AdOperands<X>
auto max_pool2d(const X& x, Size2 kernel, std::optional<Size2> stride = {}, Size2 padding = 0, Size2 dilation = 1,
                bool ceil_mode = false) {
  using T = ad::detail::input_dtype_t<X>;
  weft::detail::check_vision_dtype<T>();
  const ad::detail::Input<T> in = ad::detail::input<T>(x);
  MaxPool2dResult<T> r = weft::detail::max_pool2d_impl<T>(in.value, kernel, stride, padding, dilation, ceil_mode, true);
  return ad::detail::record_op<T>(
      "nn::max_pool2d", std::move(r.values), std::array{in.node}, ad::detail::SavedTensors(),
      [node = in.node, indices = std::move(r.indices), shape = in.value.shape()](const Tensor<T>& g) {
        ad::detail::accumulate<T>(node, weft::detail::max_pool2d_backward_impl<T>(g, indices, shape));
      });
}

/// avg_pool2d over a Var; the backward is avg_pool2d_backward.
template <class X>
requires ad::detail::AdOperands<X>
auto avg_pool2d(const X& x, Size2 kernel, std::optional<Size2> stride = {}, Size2 padding = 0, bool ceil_mode = false,
                bool count_include_pad = true) {
  using T = ad::detail::input_dtype_t<X>;
  weft::detail::check_vision_dtype<T>();
  const ad::detail::Input<T> in = ad::detail::input<T>(x);
  return ad::detail::record_op<T>(
      "nn::avg_pool2d",
      weft::detail::avg_pool2d_impl<T>(in.value, kernel, stride, padding, ceil_mode, count_include_pad),
      std::array{in.node}, ad::detail::SavedTensors(),
      [node = in.node, shape = in.value.shape(), kernel, stride, padding, ceil_mode,
       count_include_pad](const Tensor<T>& g) {
        ad::detail::accumulate<T>(node, weft::detail::avg_pool2d_backward_impl<T>(g, shape, kernel, stride, padding,
                                                                                  ceil_mode, count_include_pad));
      });
}

/// adaptive_avg_pool2d over a Var; the backward is adaptive_avg_pool2d_backward.
template <class X>
requires ad::detail::AdOperands<X>
auto adaptive_avg_pool2d(const X& x, Size2 output_size) {
  using T = ad::detail::input_dtype_t<X>;
  weft::detail::check_vision_dtype<T>();
  const ad::detail::Input<T> in = ad::detail::input<T>(x);
  return ad::detail::record_op<T>(
      "nn::adaptive_avg_pool2d", weft::detail::adaptive_avg_pool2d_impl<T>(in.value, output_size), std::array{in.node},
      ad::detail::SavedTensors(), [node = in.node, shape = in.value.shape()](const Tensor<T>& g) {
        ad::detail::accumulate<T>(node, weft::detail::adaptive_avg_pool2d_backward_impl<T>(g, shape));
      });
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn

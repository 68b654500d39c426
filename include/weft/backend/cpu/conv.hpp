// SPDX-License-Identifier: MIT
/// @file Convolution on the CPU: the forward, the input gradient and the weight gradient as products of the output positions and the patches, run as Winograd's F(2x2, 3x3) (float 3x3 of stride 1: cpu/conv_winograd.hpp), direct products (float, double: cpu/conv_direct.hpp) or implicit GEMMs on weft's packed GEMM (cpu/gemm/packed.hpp), the patches never gathered into an im2col buffer.
///
/// Which runs (conv_winograd, conv_direct): Winograd for float 3x3 kernels of stride 1 with 16 or
/// more channels and 64 or more output tiles (forward, input gradient; the weight gradient where
/// each thread's transformed sums fit 1 MiB); else the direct product from 16 channels a group;
/// else the implicit GEMM. What follows describes the product the other two share.
///
/// Forward, for each group: a product of rows = output positions (n, i, j) of the whole batch, k =
/// the group's channels x kernel taps, columns = the group's output channels. Row (n, i, j),
/// column s = (c, tap t) of the patch operand is x at channel c, tap t's offset from the window's
/// origin (i stride - pad, j stride - pad), zero in the padding; the weight [O, C/g, kH, kW] is
/// the k x O operand, packed once per call (or once per module: prepacked) as the FMA or bfloat16
/// kernel's column panels, in the patches' column order. Batch and positions as rows keep every
/// layer one large product: the last ResNet stage has 4 x 4 positions an image but batch x 16 rows.
///
/// The patches' source (PatchSource): with kPatchCopyChannels or more channels a group, x copied
/// into channels-last memory with the padding its windows reach, so that every window lies inside
/// and a tap's channels are one run (columns tap-major, s = t C + c); in slabs of whole images
/// (conv_slab_bytes) copied and read while in cache. The direct product then reads the copy in
/// place; the implicit GEMM (bfloat16, few channels) gathers its rows into packed panels.
///
/// Input gradient: dx[n, c, h, w] = sum over o, taps with h = i stride - pad + kh dilation of
/// dy[n, o, i, j] w[o, c, kh, kw]. Input rows of one stride phase (h mod stride, w mod stride)
/// reach the same taps (those with (phase + pad - kh dilation) divisible by the stride), each
/// through dy at a fixed offset (phase + pad - kh dilation) / stride: per phase, a product of rows
/// = the phase's input positions, k = output channels x its taps, columns = input channels, whose
/// patch operand reads dy (copied once, padded for every phase) as the forward reads x (step 1).
/// Every dx element is written once; no multiplies by the zeros a dilated dy would hold.
///
/// Weight gradient: dw[o, s] = sum over positions p of dy[p, o] patch(p, s): rows = output
/// channels, k = positions, columns = patch columns; the direct weight tile where every 64 patch
/// columns are one run of x's copy, else a packed GEMM; positions split over the threads, each
/// summing into its own dw, added at the end, or (dw past 1 MiB) the output tiles split.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "weft/backend/cpu/conv_direct.hpp"
#include "weft/backend/cpu/conv_winograd.hpp"
#include "weft/backend/cpu/gemm/batch.hpp"
#include "weft/backend/cpu/gemm/bf16.hpp"
#include "weft/backend/cpu/gemm/fma.hpp"
#include "weft/backend/cpu/simd/transpose.hpp"
#include "weft/core/config.hpp"
#include "weft/plan/conv_geometry.hpp"

namespace weft::detail::cpu {

/// A 4-D array read through element strides: (n, c, h, w) at data[n sn + c sc + h sh + w sw].
template <class T>
struct Strided4 {
  T* data = nullptr;
  std::int64_t sn = 0, sc = 0, sh = 0, sw = 0;
  std::int64_t offset(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) const {
    return n * sn + c * sc + h * sh + w * sw;
  }
};

/// A group's channels from which a patch source whose channels are not adjacent (NCHW) is copied
/// into a padded channels-last buffer before the product reads it (PatchSource): a tap's channels
/// are then one run, which the direct product (float, double: cpu/conv_direct.hpp) broadcasts in
/// place and the bfloat16 GEMM's gather copies as a run, and every window lies inside (no border
/// cases). The copy reads and writes the source once (0.7 ms for a float [64, 64, 32, 32]) against
/// 2 x taps x output channels flops per element. Below, a tap's run is too short to pay: the
/// patches are gathered from the source as it is.
inline constexpr std::int64_t kPatchCopyChannels = 16;

/// Whether a patch operand of T gathers its columns tap-major, each tap's channels one contiguous
/// run: where the source's channels are adjacent (channel stride 1, channels-last), or will be in
/// the channels-last copy, and more than one. NCHW sources are copied from kPatchCopyChannels
/// channels a group on, except float and double under a 1 x 1 kernel: each element then feeds
/// one window, and the copy cost more than it saved (ResNet-18's strided 1 x 1 shortcut: 3.4x
/// slower; the GEMM gathers NCHW rows of adjacent positions as runs already). The weight panels,
/// prepacked ones included, and the log follow the same rule.
template <class T>
bool patches_channel_runs(std::int64_t channel_stride, std::int64_t channels, std::int64_t taps) {
  return channels > 1 &&
         (channel_stride == 1 || (channels >= kPatchCopyChannels && (sizeof(T) == 2 || taps > 1)));
}

/// Whether the forward and the input gradient in T run as the direct product (cpu/conv_direct.hpp:
/// the patches read in place from a padded channels-last source) rather than as an implicit GEMM
/// that packs them: float and double, and bfloat16 where built on AVX512-BF16 (its pairs of
/// channels: an even count), with kPatchCopyChannels or more channels a group (whose patches then
/// always run tap-major from a channels-last source).
template <class T>
constexpr bool conv_direct(std::int64_t channels) {
  return direct_kernel_built_v<T> && channels >= kPatchCopyChannels && (sizeof(T) != 2 || channels % 2 == 0);
}

/// Whether a convolution in T has Winograd's F(2x2, 3x3) (cpu/conv_winograd.hpp): float, a 3 x 3
/// kernel of stride 1, no dilation, one group, and kWinogradChannels or more channels in and out
/// (its transforms, O(C + O) a tile, against products of O(C O)). `transposed`: the input
/// gradient's, a correlation of dy (out_channels) with the flipped kernel and padding 2 - pad,
/// which needs pad <= 2. What the weight alone decides: nn::prepack keeps the transformed weight
/// beside the direct product's panels where this holds.
inline constexpr std::int64_t kWinogradChannels = 16;
template <class T>
constexpr bool conv_winograd_shape(const ConvGeometry& geo, bool transposed = false) {
  return std::is_same_v<T, float> && geo.kernel_h == 3 && geo.kernel_w == 3 && geo.stride_h == 1 &&
         geo.stride_w == 1 && geo.dilation_h == 1 && geo.dilation_w == 1 && geo.groups == 1 &&
         geo.in_channels >= kWinogradChannels && geo.out_channels >= kWinogradChannels &&
         (!transposed || (geo.pad_h <= 2 && geo.pad_w <= 2));
}

/// Whether a convolution in T runs as Winograd's F(2x2, 3x3): conv_winograd_shape, and
/// kWinogradTiles or more 2 x 2 output tiles over the batch (`transposed`: the input gradient's,
/// tiles of x's positions). Each task reads the whole transformed weight (16 C O floats) once for
/// its tiles, so with few tiles (a batch of 1 in a deep layer: ResNet-50's 7 x 7 stage has 16) the
/// product waits on it: there the direct product, which reads 9 C O, runs about 2x faster.
inline constexpr std::int64_t kWinogradTiles = 64;
template <class T>
constexpr bool conv_winograd(const ConvGeometry& geo, bool transposed = false) {
  const std::int64_t h = transposed ? geo.in_h : geo.out_h, w = transposed ? geo.in_w : geo.out_w;
  return conv_winograd_shape<T>(geo, transposed) && geo.batch * ((h + 1) / 2) * ((w + 1) / 2) >= kWinogradTiles;
}

/// How a forward in T with x's channel stride reads its patches as positions x channels, for
/// logs: as the direct product or an implicit GEMM, and from where (conv_forward_text: by output
/// positions too).
template <class T>
std::string conv_patches_text(const ConvGeometry& geo, std::int64_t channel_stride) {
  const std::int64_t cg = geo.in_per_group();
  if (!patches_channel_runs<T>(channel_stride, cg, geo.taps())) return "implicit GEMM, patches channel-major";
  // a copy unless x is channels-last and no window reaches past it
  const bool padded = geo.pad_h > 0 || geo.pad_w > 0 ||
                      (geo.out_h - 1) * geo.stride_h + (geo.kernel_h - 1) * geo.dilation_h - geo.pad_h >= geo.in_h ||
                      (geo.out_w - 1) * geo.stride_w + (geo.kernel_w - 1) * geo.dilation_w - geo.pad_w >= geo.in_w;
  const bool copy = channel_stride != 1 || padded;
  if (conv_winograd<T>(geo))  // its 4 x 4 tiles also reach a row (column) past an odd output
    return copy || geo.out_h % 2 || geo.out_w % 2 ? "Winograd F(2x2, 3x3), 16 products of 4 x 4 tiles transformed from a padded channels-last copy of x"
                : "Winograd F(2x2, 3x3), 16 products of 4 x 4 tiles transformed from x";
  if (conv_direct<T>(cg))
    return copy ? "direct, patches read in place from a padded channels-last copy of x" : "direct, patches read in place from x";
  return copy ? "implicit GEMM, patches tap-major from a padded channels-last copy of x (a run per tap)"
              : "implicit GEMM, patches tap-major (each tap's channels one run)";
}

/// What a convolution's forward writes after its product: y = acc + bias[o] (bias may be null),
/// then max(y, 0) if relu_before_residual, + residual[n, o, i, j] if residual.data, then max(y, 0)
/// if relu_after_residual: torch's relu(conv(x) + b) + r, and a ResNet block's relu(conv + b + r).
template <class T>
struct ConvEpilogue {
  const T* bias = nullptr;
  Strided4<const T> residual{};
  bool relu_before_residual = false, relu_after_residual = false;

  /// Whether the sums are written as they are.
  bool none() const { return !bias && !residual.data && !relu_before_residual && !relu_after_residual; }
  /// What is written for the sum y of output channel o; r: its residual element (null without one).
  template <class B>
  B apply(B y, std::int64_t o, const T* r) const {
    if (bias) y += B(bias[o]);
    if (relu_before_residual) y = std::max(y, B(0));
    if (r) y += B(*r);
    if (relu_after_residual) y = std::max(y, B(0));
    return y;
  }
};

}  // namespace weft::detail::cpu

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu {

/// The GEMM kernel a convolution in T runs on: FMA packets for float and double; for bfloat16 the
/// build's native kernel (AVX512-BF16, AMX or BFMMLA: cpu/gemm/bf16.hpp), its finished blocks the
/// fp32 sums (GemmFloatBlocks) so that the epilogue and the weight gradient's partial sums work on
/// them before the one rounding; 16-bit floats without one compute in float (the nn layer casts).
template <class T>
struct conv_kernel {
  using type = GemmFmaKernel<T>;
};
template <>
struct conv_kernel<weft::half> {
  using type = GemmFmaKernel<float>;
};
template <>
struct conv_kernel<weft::bfloat16> {
#if WEFT_GEMM_BF16_NATIVE
  using type = GemmFloatBlocks<GemmBf16Kernel>;
#else
  using type = GemmFmaKernel<float>;
#endif
};
template <class T>
using ConvKernel = typename conv_kernel<T>::type;

/// How the packed product of conv2d_forward_by_positions splits: `chunks` of K::kBlockCols
/// positions an image, and, where `batch x chunks` tasks give each of `threads` threads 4 or
/// more (`tasks`), a task per (image, chunk) whose packed patches stay in L2 while they are
/// multiplied; otherwise a product per image whose output channels split over the threads.
struct PositionTasks {
  std::int64_t chunks;
  int threads;
  bool tasks;
};
template <class T>
PositionTasks conv_position_tasks(const ConvGeometry& geo) {
  using K = ConvKernel<T>;
  const std::int64_t plane = geo.out_h * geo.out_w, chunks = (plane + K::kBlockCols - 1) / K::kBlockCols;
  const int threads = threads_for(geo.batch * geo.out_channels * geo.reduction() * plane / 64);
  return {chunks, threads, geo.batch * chunks >= 4 * threads};
}

/// The widest w stride of x (in elements) whose positions conv_pointwise_planes gathers: a
/// strided 1 x 1 kernel's sampled NCHW input, up to stride 4 (each line of x it reads then holds
/// 4 of its elements or more).
inline constexpr std::int64_t kPointwiseGatherStride = 4;

/// Whether a forward in T is a plain product per image, Y_n = W X_n with X_n x's [C, H W]
/// positions: float or double, a 1 x 1 kernel of stride 1 without padding, as many output
/// channels as input ones or more, over an x whose positions are at most
/// kPointwiseGatherStride elements apart along w, with positions enough for
/// conv_position_tasks' tasks. Contiguous planes (x_sh = in_w, x_sw = 1) are packed as they are;
/// other positions (a strided 1 x 1 kernel's sampled view: conv_sampled_input) are gathered into
/// the panels (conv_pointwise_gathers). Its output rows are then runs of an NCHW output.
/// ResNet-50's first-stage 1 x 1 layers at batch 1 (3136 positions, AVX2, 2 threads): the expand
/// (64 -> 256) 1.5x faster than as positions x channels (its 4x larger output stored through
/// transposes), the reduce (256 -> 64) no faster, and its input gradient as such a forward
/// (256 -> 64) 0.9-1.0x; with fewer positions than tasks (the later stages) a product per image
/// ran 1.2-1.3x slower. ResNet-18's stride-2 shortcut (64 -> 128, batch 64), gathered: see
/// docs/vision.md.
template <class T>
bool conv_pointwise_planes(const ConvGeometry& geo, std::int64_t x_sh, std::int64_t x_sw) {
  return (std::is_same_v<T, float> || std::is_same_v<T, double>) && geo.taps() == 1 && geo.stride_h == 1 &&
         geo.stride_w == 1 && geo.pad_h == 0 && geo.pad_w == 0 && geo.out_channels >= geo.in_channels && x_sw >= 1 &&
         x_sw <= kPointwiseGatherStride && x_sh >= x_sw * geo.in_w && conv_position_tasks<T>(geo).tasks;
}

/// Whether a conv_pointwise_planes product gathers x's positions (they are not one contiguous
/// run a channel).
inline bool conv_pointwise_gathers(const ConvGeometry& geo, std::int64_t x_sh, std::int64_t x_sw) {
  return x_sw != 1 || x_sh != geo.in_w;
}

/// How many channel planes ahead gather_position_columns prefetches the rows it reads.
inline constexpr std::int64_t kGatherPrefetchChannels = 8;

/// to[c ld + q] = x[n, c, i, j] for every input channel c and the positions p0 + q = i out_w + j,
/// q < cols: the b operand of a conv_pointwise_planes product whose positions are not
/// contiguous, gathered a channel at a time, its rows in order, the rows of the channel
/// kGatherPrefetchChannels ahead prefetched: ResNet-18's sampled shortcut input (every other
/// row of 64 planes of 4 KB an image) comes from memory, where the hardware's prefetchers,
/// within a page, left the gather 40% of the convolution (1.25-1.3x faster prefetched).
template <class T>
void gather_position_columns(const ConvGeometry& geo, const Strided4<const T>& x, std::int64_t n, std::int64_t p0,
                             std::int64_t cols, T* to, std::int64_t ld) {
  for (std::int64_t c = 0; c < geo.in_channels; ++c)
    for (std::int64_t q = 0; q < cols;) {
      const std::int64_t p = p0 + q, i = p / geo.out_w, j = p % geo.out_w, run = std::min(geo.out_w - j, cols - q);
      const T* from = x.data + x.offset(n, c, i, j);
      if (c + kGatherPrefetchChannels < geo.in_channels)
        for (std::int64_t t = 0; t < run * x.sw; t += 64 / std::int64_t(sizeof(T)))
          __builtin_prefetch(from + kGatherPrefetchChannels * x.sc + t);
      for (std::int64_t t = 0; t < run; ++t) to[c * ld + q + t] = from[t * x.sw];
      q += run;
    }
}

/// Whether the forward in T runs by output positions (conv2d_forward_by_positions): one group of
/// few input channels (a stem's 3: its patches have no runs of channels to read) from an x whose
/// rows are runs (x_sw, its w stride, 1), or a conv_pointwise_planes product, into an output
/// whose positions are adjacent and channels not (NCHW: out_sw 1, out_sc not). The
/// product's rows are then the output channels and its columns the positions, so a block's rows
/// are runs of the output and the patch panels' rows copies of runs of x's rows (PhaseRows). In
/// the other orientation, ResNet-18's stem stored its NCHW output through transposes (a third of
/// its bfloat16 forward) and gathered its patches an element at a time (a fifth); ResNet-50's
/// batch-1 1 x 1 layers stored theirs through transposes too (about 0.8x libtorch's forward).
template <class T>
bool conv_forward_by_positions(const ConvGeometry& geo, std::int64_t x_sh, std::int64_t x_sw, std::int64_t out_sc,
                               std::int64_t out_sw) {
  const bool few_channels = geo.in_channels < kPatchCopyChannels;
  return geo.groups == 1 && ((few_channels && x_sw == 1) || conv_pointwise_planes<T>(geo, x_sh, x_sw)) &&
         out_sw == 1 && out_sc != 1;
}

/// Whether this build has a kernel for convolutions with T operands (float, double; bfloat16
/// where a native bfloat16 GEMM is built).
template <class T>
inline constexpr bool conv_native_built_v =
    !weft::is_16bit_float_v<T> || (std::is_same_v<T, weft::bfloat16> && WEFT_GEMM_BF16_NATIVE);

/// Whether convolutions in T run on ConvKernel<T> with T operands in this process (built, and for
/// AMX the OS grants tiles), rather than in float.
template <class T>
bool conv_native() {
  if constexpr (std::is_same_v<T, weft::bfloat16>) return conv_native_built_v<T> && bf16_gemm_native();
  else return conv_native_built_v<T>;
}

/// Rows above and below a source and columns left and right that its copy holds as zeros.
struct SourcePads {
  std::int64_t top = 0, bottom = 0, left = 0, right = 0;
  bool any() const { return top || bottom || left || right; }
};

/// The patch operand of an implicit GEMM: row i = (n, a, b) of a [batch, grid_h, grid_w] grid,
/// column s = (c, t) (channel c, tap t):
///   A(i, s) = src[n, channel0 + c, a step_h + origin_h + tap_h[t], b step_w + origin_w + tap_w[t]]
/// and zero where that position is outside [0, src_h) x [0, src_w) (the padding). Columns run
/// tap-major (s = t channels + c) where the source's channels are adjacent (channels-last: a
/// tap's channels are one contiguous run to copy), else channel-major (s = c taps + t, the
/// weight's own order). The weight operands follow column_channel / column_tap.
template <class T>
struct PatchOperand {
  Strided4<const T> src;
  std::int64_t src_h = 1, src_w = 1;
  std::int64_t batch = 1, grid_h = 1, grid_w = 1;
  std::int64_t step_h = 1, step_w = 1, origin_h = 0, origin_w = 0;
  std::int64_t channel0 = 0, channels = 1;
  std::vector<std::int64_t> tap_h, tap_w;
  SourcePads zeros;  // the source's rows and columns of padding (a PatchSource's copy), all zeros
  // Derived by finish(): per tap its element offset; per column its channel, tap, offset.
  bool channels_inner = false;
  std::vector<std::int64_t> tap_offset, column_channel, column_tap, column_offset, column_h, column_w;
  std::int64_t min_h = 0, max_h = 0, min_w = 0, max_w = 0;

  std::int64_t taps() const { return std::int64_t(tap_h.size()); }
  std::int64_t rows() const { return batch * grid_h * grid_w; }
  std::int64_t columns() const { return channels * taps(); }

  /// The taps whose elements lie in the data, not the zero padding, for each grid row a
  /// (rows[a]) and grid column b (columns[b]): tap t is bit t, and a row (n, a, b) reaches the
  /// taps of rows[a] & columns[b]. With more than 64 taps, every tap (kAllTaps).
  void data_taps(std::vector<std::uint64_t>& rows, std::vector<std::uint64_t>& columns) const {
    rows.assign(std::size_t(grid_h), kAllTaps), columns.assign(std::size_t(grid_w), kAllTaps);
    if (taps() > 64) return;
    for (std::int64_t t = 0; t < taps(); ++t) {
      for (std::int64_t a = 0; a < grid_h; ++a) {
        const std::int64_t h = a * step_h + origin_h + tap_h[t];
        if (h < zeros.top || h >= src_h - zeros.bottom) rows[a] &= ~(std::uint64_t(1) << t);
      }
      for (std::int64_t b = 0; b < grid_w; ++b) {
        const std::int64_t w = b * step_w + origin_w + tap_w[t];
        if (w < zeros.left || w >= src_w - zeros.right) columns[b] &= ~(std::uint64_t(1) << t);
      }
    }
  }

  /// Fills the derived tables once the taps are set.
  void finish() {
    const std::int64_t nt = taps();
    tap_offset.resize(std::size_t(nt));
    for (std::int64_t t = 0; t < nt; ++t) tap_offset[t] = tap_h[t] * src.sh + tap_w[t] * src.sw;
    min_h = nt ? *std::min_element(tap_h.begin(), tap_h.end()) : 0;
    max_h = nt ? *std::max_element(tap_h.begin(), tap_h.end()) : 0;
    min_w = nt ? *std::min_element(tap_w.begin(), tap_w.end()) : 0;
    max_w = nt ? *std::max_element(tap_w.begin(), tap_w.end()) : 0;
    // runs where the channels are adjacent (a PatchSource copies them so where patches_channel_runs
    // asks for runs)
    channels_inner = src.sc == 1 && channels > 1;
    for (auto* v : {&column_channel, &column_tap, &column_offset, &column_h, &column_w}) v->resize(std::size_t(columns()));
    for (std::int64_t c = 0; c < channels; ++c)
      for (std::int64_t t = 0; t < nt; ++t) {
        const std::int64_t col = channels_inner ? t * channels + c : c * nt + t;
        column_channel[col] = c;
        column_tap[col] = t;
        column_offset[col] = (channel0 + c) * src.sc + tap_offset[t];
        column_h[col] = tap_h[t];
        column_w[col] = tap_w[t];
      }
  }

  /// Reorders the columns channel-major (column c taps + t, a weight's own order) where they run
  /// tap-major, for a product that reads them through the column tables alone (pack_columns):
  /// the weight gradient then writes each block's row into dw as one run.
  void order_by_channel() {
    if (!channels_inner) return;
    const std::int64_t nt = taps();
    for (auto* v : {&column_channel, &column_tap, &column_offset, &column_h, &column_w}) {
      std::vector<std::int64_t> tap_major = *v;
      for (std::int64_t c = 0; c < channels; ++c)
        for (std::int64_t t = 0; t < nt; ++t) (*v)[std::size_t(c * nt + t)] = tap_major[std::size_t(t * channels + c)];
    }
    channels_inner = false;  // the runs of a tap's channels are gone
  }

  /// Where row i's window starts: its image's element offset and its origin (h, w).
  void row_origin(std::int64_t i, std::int64_t& base, std::int64_t& h0, std::int64_t& w0) const {
    const std::int64_t plane = grid_h * grid_w, n = i / plane, rem = i - n * plane, a = rem / grid_w;
    h0 = a * step_h + origin_h;
    w0 = (rem - a * grid_w) * step_w + origin_w;
    base = n * src.sn + h0 * src.sh + w0 * src.sw;
  }
  bool window_inside(std::int64_t h0, std::int64_t w0) const {
    return h0 + min_h >= 0 && h0 + max_h < src_h && w0 + min_w >= 0 && w0 + max_w < src_w;
  }

  /// Widens `pads` (rows above and below the source, columns left and right) to what every window
  /// reaches outside it; the taps set, before finish().
  template <class Pads>
  void reach(Pads& pads) const {
    if (tap_h.empty() || rows() == 0) return;
    const auto [lo_h, hi_h] = std::minmax_element(tap_h.begin(), tap_h.end());
    const auto [lo_w, hi_w] = std::minmax_element(tap_w.begin(), tap_w.end());
    pads.top = std::max(pads.top, -(origin_h + *lo_h));
    pads.bottom = std::max(pads.bottom, origin_h + (grid_h - 1) * step_h + *hi_h - (src_h - 1));
    pads.left = std::max(pads.left, -(origin_w + *lo_w));
    pads.right = std::max(pads.right, origin_w + (grid_w - 1) * step_w + *hi_w - (src_w - 1));
  }

  /// The panel of rows i0 .. i0 + R - 1, k-major: dst[s R + r] = A(i0 + r, s) for every column s
  /// (zeros for rows past rows()). Windows wholly inside the source (most rows) read without
  /// bounds checks.
  template <std::int64_t R>
  void pack_rows(std::int64_t i0, T* dst) const {
    std::int64_t base[R], h0[R], w0[R];
    std::int64_t live = 0;
    bool inside = true;
    for (std::int64_t r = 0; r < R && i0 + r < rows(); ++r, ++live) {
      row_origin(i0 + r, base[r], h0[r], w0[r]);
      inside = inside && window_inside(h0[r], w0[r]);
    }
    const std::int64_t cols = columns();
    const T* s = src.data;
    if (live == R && inside) {
      bool adjacent = true;  // the rows' windows one element apart (NCHW, stride 1, one output row)
      for (std::int64_t r = 1; r < R; ++r) adjacent = adjacent && base[r] == base[0] + r;
      if (adjacent) {  // each column's R values are adjacent: one packet copy
        for (std::int64_t col = 0; col < cols; ++col)
          std::memcpy(dst + col * R, s + base[0] + column_offset[col], std::size_t(R) * sizeof(T));
        return;
      }
      if (channels_inner) {  // each row's tap: `channels` adjacent elements, written R apart
        for (std::int64_t t = 0; t < taps(); ++t) {
          const T* p[R];
          for (std::int64_t r = 0; r < R; ++r) p[r] = s + base[r] + channel0 + tap_offset[t];
          T* d = dst + t * channels * R;
          for (std::int64_t c = 0; c < channels; ++c)
            for (std::int64_t r = 0; r < R; ++r) d[c * R + r] = p[r][c];
        }
        return;
      }
      for (std::int64_t col = 0; col < cols; ++col) {
        const std::int64_t off = column_offset[col];
        for (std::int64_t r = 0; r < R; ++r) dst[col * R + r] = s[base[r] + off];
      }
      return;
    }
    // Rows near the border: per row and tap, where the tap's channels start and their step, a
    // zero element with step 0 where the tap falls in the padding (no branch per element).
    const std::int64_t nt = taps();
    thread_local std::vector<const T*> start;
    thread_local std::vector<std::int64_t> step;
    start.resize(std::size_t(R * nt));
    step.resize(std::size_t(R * nt));
    static const T zero = T(0);
    for (std::int64_t r = 0; r < R; ++r)
      for (std::int64_t t = 0; t < nt; ++t) {
        const bool valid = r < live && std::uint64_t(h0[r] + tap_h[t]) < std::uint64_t(src_h) &&
                           std::uint64_t(w0[r] + tap_w[t]) < std::uint64_t(src_w);
        start[r * nt + t] = valid ? s + base[r] + channel0 * src.sc + tap_offset[t] : &zero;
        step[r * nt + t] = valid ? src.sc : 0;
      }
    if (channels_inner) {
      for (std::int64_t t = 0; t < nt; ++t)
        for (std::int64_t c = 0; c < channels; ++c)
          for (std::int64_t r = 0; r < R; ++r) dst[(t * channels + c) * R + r] = start[r * nt + t][c * step[r * nt + t]];
      return;
    }
    for (std::int64_t c = 0; c < channels; ++c)
      for (std::int64_t t = 0; t < nt; ++t)
        for (std::int64_t r = 0; r < R; ++r) dst[(c * nt + t) * R + r] = start[r * nt + t][c * step[r * nt + t]];
  }

  /// Rows i0 .. i0 + R - 1 row-major, row r at dst + r columns(): what the packers of kernels
  /// whose panels are not k-major (the bfloat16 ones) read. Returns how many rows exist (those
  /// past rows() are not written).
  std::int64_t gather_rows(std::int64_t i0, std::int64_t R, T* dst) const {
    const std::int64_t live = std::min(R, rows() - i0), cols = columns(), nt = taps();
    const T* s = src.data;
    for (std::int64_t r = 0; r < live; ++r) {
      std::int64_t base, h0, w0;
      row_origin(i0 + r, base, h0, w0);
      T* d = dst + r * cols;
      const bool inside = window_inside(h0, w0);
      if (channels_inner) {  // a tap's channels: one run to copy, or zeros in the padding
        for (std::int64_t t = 0; t < nt; ++t) {
          const bool valid = inside || (std::uint64_t(h0 + tap_h[t]) < std::uint64_t(src_h) &&
                                        std::uint64_t(w0 + tap_w[t]) < std::uint64_t(src_w));
          if (valid) std::memcpy(d + t * channels, s + base + channel0 + tap_offset[t], std::size_t(channels) * sizeof(T));
          else std::fill(d + t * channels, d + (t + 1) * channels, T(0));
        }
      } else if (inside) {
        for (std::int64_t col = 0; col < cols; ++col) d[col] = s[base + column_offset[col]];
      } else {
        for (std::int64_t col = 0; col < cols; ++col) {
          const bool valid = std::uint64_t(h0 + column_h[col]) < std::uint64_t(src_h) &&
                             std::uint64_t(w0 + column_w[col]) < std::uint64_t(src_w);
          d[col] = valid ? s[base + column_offset[col]] : T(0);
        }
      }
    }
    return live;
  }

  /// Columns j0 .. j0 + C - 1 of rows p0 .. p0 + count - 1, row-major: dst[p C + c] = A(p0 + p,
  /// j0 + c), zeros past columns() (the weight gradient's k x C panels).
  template <std::int64_t C>
  void pack_columns(std::int64_t p0, std::int64_t count, std::int64_t j0, T* dst) const {
    const std::int64_t cols = std::min(C, columns() - j0);
    const T* s = src.data;
    // the columns one run of the source (a tap's channels, channels-last): a copy per row
    bool run = true;
    for (std::int64_t c = 1; c < cols; ++c) run = run && column_offset[j0 + c] == column_offset[j0] + c;
    for (std::int64_t p = 0; p < count; ++p) {
      std::int64_t base, h0, w0;
      row_origin(p0 + p, base, h0, w0);
      T* d = dst + p * C;
      if (run && window_inside(h0, w0)) {
        const T* from = s + base + column_offset[j0];
        // a whole panel's width as a copy of constant length: of variable length, a row's copy
        // made the 128- and 256-channel 3 x 3 bfloat16 weight gradients 5-7% slower
        if (cols == C) std::copy(from, from + C, d);
        else std::copy(from, from + cols, d);
      } else if (window_inside(h0, w0)) {
        for (std::int64_t c = 0; c < cols; ++c) d[c] = s[base + column_offset[j0 + c]];
      } else {
        for (std::int64_t c = 0; c < cols; ++c) {
          const bool valid = std::uint64_t(h0 + column_h[j0 + c]) < std::uint64_t(src_h) &&
                             std::uint64_t(w0 + column_w[j0 + c]) < std::uint64_t(src_w);
          d[c] = valid ? s[base + column_offset[j0 + c]] : T(0);
        }
      }
      for (std::int64_t c = cols; c < C; ++c) d[c] = T(0);
    }
  }
};

/// The source a convolution's patches are read from: the tensor itself where patches_channel_runs
/// says not to read runs, or where its channels are adjacent already and no window reaches past
/// it; else a channels-last copy with the padding the windows reach (pads) as zeros, so that every
/// window lies inside. The copy is one pass (NCHW: tiles of a packet's lanes of channels x plane
/// elements, each a packet transpose), into a buffer from the host allocator's cache of large buffers
/// (a fresh one would fault its pages on every call).
template <class T>
class PatchSource {
 public:
  /// src [batch, channels, h, w]; `group_channels` the channels of one group, `taps` the kernel's.
  PatchSource(const Strided4<const T>& src, std::int64_t batch, std::int64_t channels, std::int64_t h, std::int64_t w,
              std::int64_t group_channels, std::int64_t taps, const SourcePads& pads)
      : view_(src), h_(h), w_(w) {
    if (!patches_channel_runs<T>(src.sc, group_channels, taps) || (src.sc == 1 && !pads.any())) return;
    pads_ = pads;
    const std::int64_t hp = h + pads.top + pads.bottom, wp = w + pads.left + pads.right;
    bytes_ = std::size_t(batch * hp * wp * channels) * sizeof(T);
    copy_ = static_cast<T*>(allocate_host_buffer(bytes_));
    if (!copy_) throw std::bad_alloc();
    const int threads = threads_for(batch * hp * wp * channels);
    // Channels not adjacent (NCHW, or a view of it): tiles of L channels x L consecutive positions
    // of the image (across its rows: 8 x 8 and 4 x 4 images have no row of L), each a packet
    // transpose whose L rows of channels go to their positions; the padding ring zeroed on its
    // own.
    constexpr std::int64_t L = simd::kTransposeLanes<T>;
    const bool tiles = src.sc != 1;
    const std::int64_t plane = h * w, channel_tiles = (channels + L - 1) / L;
    WEFT_PRAGMA_OMP(omp parallel num_threads(threads) if (threads > 1))
    {
      WEFT_PRAGMA_OMP(omp for schedule(static))
      for (std::int64_t row = 0; row < batch * hp; ++row) {
        const std::int64_t n = row / hp, i = row - n * hp - pads.top;
        T* out = copy_ + row * wp * channels;
        if (i < 0 || i >= h) {
          std::fill(out, out + wp * channels, T(0));
          continue;
        }
        std::fill(out, out + pads.left * channels, T(0));
        std::fill(out + (pads.left + w) * channels, out + wp * channels, T(0));
        if (tiles) continue;  // the tiles below fill the inside
        out += pads.left * channels;
        const T* in = src.data + n * src.sn + i * src.sh;
        for (std::int64_t j = 0; j < w; ++j) std::copy(in + j * src.sw, in + j * src.sw + channels, out + j * channels);
      }
      if (tiles && src.sw == 1 && src.sh == w) {  // whole planes: tiles run across the image's rows
        alignas(64) T staged[L * L] = {};
        WEFT_PRAGMA_OMP(omp for schedule(static))
        for (std::int64_t task = 0; task < batch * channel_tiles; ++task) {
          const std::int64_t n = task / channel_tiles, c0 = task % channel_tiles * L, nc = std::min(L, channels - c0);
          const T* in = src.data + n * src.sn + c0 * src.sc;
          T* image = copy_ + n * hp * wp * channels + c0;
          auto at = [&](std::int64_t p) {  // plane element p's place in the copy
            return image + ((p / w + pads.top) * wp + p % w + pads.left) * channels;
          };
          // The first `count` rows of a transposed tile to positions p0 .. p0 + count - 1, stepped
          // along the image's rows: at(p) for each, a division a position, took half of the copy's
          // time (a 16 x 16 image's: 0.45 ms against 0.19).
          auto put = [&](const T* tile, std::int64_t p0, std::int64_t count) {
            std::int64_t j = p0 % w;
            T* out = at(p0);
            for (std::int64_t e = 0; e < count; ++e) {
              if (nc == L) std::copy(tile + e * L, tile + (e + 1) * L, out);  // a packet
              else std::copy(tile + e * L, tile + e * L + nc, out);
              out += channels;
              if (++j == w) j = 0, out += (pads.left + pads.right) * channels;
            }
          };
          alignas(64) T tile[L * L];
          std::int64_t p0 = 0;
          for (; nc == L && p0 + L <= plane; p0 += L) {
            simd::transpose_tile(in + p0, src.sc, tile, L);
            put(tile, p0, L);
          }
          // The last positions (fewer than L; all of a 4 x 4 or 7 x 7 image's) or channels (fewer
          // than L) staged as a tile first: element by element, a 4 x 4 image's copy ran at half
          // the rate. The staged elements past them go to tile rows that are never put.
          for (std::int64_t rest; p0 < plane; p0 += rest) {
            rest = std::min(L, plane - p0);
            for (std::int64_t c = 0; c < nc; ++c) std::copy(in + c * src.sc + p0, in + c * src.sc + p0 + rest, staged + c * L);
            simd::transpose_tile(staged, L, tile, L);
            put(tile, p0, rest);
          }
        }
      } else if (tiles) {
        // Rows of a view (a 1 x 1 kernel's sampled input: positions sw apart, conv_sampled_input):
        // each tile L consecutive elements of a row of the underlying tensor, of which every sw-th
        // is a position (only the sampled rows are read, in packets). A tile reads up to sw - 1
        // elements past its last position: within the view's extent (up to its last element),
        // inside the tensor it views.
        const std::int64_t per = src.sw >= 1 && src.sw <= L && src.sn > 0 && src.sc > 0 && src.sh > 0 ? L / src.sw : 0;
        const T* last = src.data + (batch - 1) * src.sn + (channels - 1) * src.sc + (h - 1) * src.sh + (w - 1) * src.sw;
        WEFT_PRAGMA_OMP(omp for schedule(static))
        for (std::int64_t task = 0; task < batch * channel_tiles * h; ++task) {
          const std::int64_t n = task / (channel_tiles * h), c0 = task / h % channel_tiles * L, i = task % h;
          const std::int64_t nc = std::min(L, channels - c0);
          const T* in = src.data + n * src.sn + c0 * src.sc + i * src.sh;
          T* out = copy_ + ((n * hp + i + pads.top) * wp + pads.left) * channels + c0;
          alignas(64) T tile[L * L];
          std::int64_t j0 = 0;
          for (; nc == L && per > 0 && j0 + per <= w && in + (L - 1) * src.sc + j0 * src.sw + L - 1 <= last; j0 += per) {
            simd::transpose_tile(in + j0 * src.sw, src.sc, tile, L);
            for (std::int64_t q = 0; q < per; ++q)
              std::copy(tile + q * src.sw * L, tile + (q * src.sw + 1) * L, out + (j0 + q) * channels);
          }
          for (std::int64_t j = j0; j < w; ++j)  // the remainder, one element at a time
            for (std::int64_t c = 0; c < nc; ++c) out[j * channels + c] = in[c * src.sc + j * src.sw];
        }
      }
    }
    view_ = Strided4<const T>{copy_, hp * wp * channels, 1, wp * channels, channels};
  }
  ~PatchSource() {
    if (copy_) release_host_buffer(copy_, bytes_);
  }
  PatchSource(const PatchSource&) = delete;
  PatchSource& operator=(const PatchSource&) = delete;

  const Strided4<const T>& view() const { return view_; }

  /// Points a patch operand (taps set, before finish()) at this source: at the copy, its origin
  /// moved by the padding and its bounds the copy's.
  void rebase(PatchOperand<T>& p) const {
    p.src = view_;
    p.src_h = h_ + pads_.top + pads_.bottom, p.src_w = w_ + pads_.left + pads_.right;
    p.origin_h += pads_.top, p.origin_w += pads_.left;
    p.zeros = pads_;
  }

 private:
  Strided4<const T> view_;
  std::int64_t h_, w_;
  SourcePads pads_;
  T* copy_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Whether K is an FMA kernel, whose a panels are k-major and hold the elements themselves
/// (PatchOperand::pack_rows writes them directly); the bfloat16 kernels pack rows of their own.
template <class K>
inline constexpr bool is_fma_kernel_v = std::is_same_v<K, GemmFmaKernel<typename K::Packed>>;

/// K's panel of rows i0 .. i0 + K::kRows - 1 of the patch operand a (`steps` steps of k).
template <class K, class T>
void pack_patch_panel(const PatchOperand<T>& a, std::int64_t i0, std::int64_t steps, typename K::Packed* dst) {
  if constexpr (is_fma_kernel_v<K>) {
    a.template pack_rows<K::kRows>(i0, dst);
  } else {
    thread_local std::vector<T> rows;
    rows.resize(std::size_t(K::kRows * a.columns()));
    const std::int64_t live = a.gather_rows(i0, K::kRows, rows.data());
    K::pack_a(rows.data(), a.columns(), live, a.columns(), 0, steps, dst);
  }
}

/// K's a panel of the rows i0 .. i0 + K::kRows - 1 of the row-major n x k matrix a (rows lda apart).
template <class K, class T>
void pack_rows_panel(const T* a, std::int64_t lda, std::int64_t n, std::int64_t k, std::int64_t i0, std::int64_t steps,
                     typename K::Packed* dst) {
  if constexpr (is_fma_kernel_v<K>) K::pack_a(StridedMatrix<T>{a, lda, 1}, n, k, i0, steps, dst);
  else K::pack_a(a, lda, n, k, i0, steps, dst);
}

/// K's b panel of the columns j0 .. j0 + K::kCols - 1 of the row-major k x m matrix b (rows ldb apart).
template <class K, class T>
void pack_columns_panel(const T* b, std::int64_t ldb, std::int64_t k, std::int64_t m, std::int64_t j0,
                        std::int64_t steps, typename K::Packed* dst) {
  if constexpr (is_fma_kernel_v<K>) K::pack_b(StridedMatrix<T>{b, ldb, 1}, k, m, j0, steps, dst);
  else K::pack_b(b, ldb, k, m, j0, steps, dst);
}

/// Rows per task of an implicit GEMM with `k`-long rows: about 1 MiB of packed patches (they stay
/// in L2 while the task's output blocks run), at least one register block of rows, and small
/// enough that `tasks_wanted` tasks exist where the rows allow.
template <class K>
std::int64_t conv_rows_per_task(std::int64_t rows, std::int64_t k, std::int64_t other_tasks, int threads) {
  const std::int64_t elem_bytes = std::int64_t(sizeof(typename K::Packed)) * K::kStepElemsA / (K::kRows * K::kStep);
  const std::int64_t cache_rows = std::max<std::int64_t>(K::kRows, (std::int64_t(1) << 20) / (std::max<std::int64_t>(k, 1) * std::max<std::int64_t>(elem_bytes, 1)));
  const std::int64_t tasks_wanted = std::max<std::int64_t>(1, (4 * threads + other_tasks - 1) / other_tasks);
  std::int64_t chunk = std::min(cache_rows, (rows + tasks_wanted - 1) / tasks_wanted);
  chunk = std::max<std::int64_t>(chunk, K::kRows);
  return (chunk + K::kRows - 1) / K::kRows * K::kRows;
}

/// For each group g < groups: the rows x k x m product of the patch operand patches(g) and the
/// prepacked panels at `weights` + g packed_panels_size(k, m), on up to `threads` threads in
/// tasks of (group, row chunk, column chunk), on kernel K; finish(g, i0, i1, j0, j1, block, ld)
/// receives every finished block (block(i - i0, j - j0) at block[(i - i0) ld + j - j0], K::Elem).
template <class K, class Patches, class Finish>
void implicit_gemm(std::int64_t groups, std::int64_t rows, std::int64_t k, std::int64_t m, const Patches& patches,
                   const typename K::Packed* weights, int threads, const Finish& finish) {
  using Packed = typename K::Packed;
  if (rows == 0 || m == 0) return;
  // Few rows (a small batch's last layers): the weight, not the patches, is the large operand,
  // and every row chunk would stream it again (batch 1, ResNet-18's last stage: 16 rows and a
  // 9 MB weight read 4 times). Then the rows stay one chunk and the columns split finer.
  const bool few_rows = rows <= K::kBlockRows;
  const std::int64_t col_panels = (m + K::kCols - 1) / K::kCols;
  const std::int64_t col_chunk =
      few_rows ? std::max<std::int64_t>(1, col_panels / (2 * threads)) * K::kCols : K::kBlockCols;
  const std::int64_t col_chunks = (m + col_chunk - 1) / col_chunk;
  const std::int64_t row_chunk = few_rows ? rows : conv_rows_per_task<K>(rows, k, groups * col_chunks, threads);
  const std::int64_t row_chunks = (rows + row_chunk - 1) / row_chunk;
  const std::int64_t tasks = groups * row_chunks * col_chunks, group_panels = packed_panels_size<K>(k, m);
  const std::int64_t steps = (k + K::kStep - 1) / K::kStep;
  // With several column chunks over few rows, the patches are gathered once per group (in
  // parallel) and every task reads those panels in place (prepacked): gathering border windows
  // again per chunk was a quarter of a batch-1 inference pass, and copying the gathered panels
  // into each task's scratch (up to 2 MB a task) a third of ResNet-50's 14 x 14 and 7 x 7 layers.
  const std::int64_t row_panels = (rows + K::kRows - 1) / K::kRows, panel = steps * K::kStepElemsA;
  HostVector<Packed> gathered;
  if (few_rows && col_chunks > 1) {
    gathered.resize(std::size_t(groups * row_panels * panel));
    const int gather_threads = int(std::min<std::int64_t>(threads, groups * row_panels));
    WEFT_PRAGMA_OMP(omp parallel for num_threads(gather_threads) schedule(dynamic, 1) if (gather_threads > 1))
    for (std::int64_t t = 0; t < groups * row_panels; ++t)
      pack_patch_panel<K>(patches(t / row_panels), t % row_panels * K::kRows, steps, gathered.data() + t * panel);
  }
  threads = int(std::min<std::int64_t>(threads, tasks));
  WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1))
  for (std::int64_t task = 0; task < tasks; ++task) {
    const std::int64_t g = task / (row_chunks * col_chunks), rc = task / col_chunks % row_chunks, cc = task % col_chunks;
    const std::int64_t r0 = rc * row_chunk, c0 = cc * col_chunk;
    const auto& a = patches(g);
    auto done = [&](std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1, const typename K::Elem* block,
                    std::int64_t ld) {
      finish(g, r0 + i0, r0 + i1, c0 + j0, c0 + j1, block, ld);
    };
    const PrepackedPanels<Packed> b{weights + g * group_panels + c0 / K::kCols * steps * K::kStepElemsB};
    const std::int64_t n = std::min(row_chunk, rows - r0), mc = std::min(col_chunk, m - c0);
    if (!gathered.empty()) {  // few rows: one row chunk (r0 = 0), its panels gathered
      gemm_packed<K>(PrepackedPanels<Packed>{gathered.data() + g * row_panels * panel}, b, n, k, mc, 1,
                     GemmBlockEpilogue<decltype(done)>{done});
    } else {
      auto pack_a = [&](std::int64_t i0, std::int64_t /*steps*/, Packed* dst) { pack_patch_panel<K>(a, r0 + i0, steps, dst); };
      gemm_packed<K>(pack_a, b, n, k, mc, 1, GemmBlockEpilogue<decltype(done)>{done});
    }
  }
}

/// K's b panel of a k x cols operand (cols <= K::kCols, at most 64) that fill(dst, ld) writes
/// row-major, dst[s ld + c] = B(s, c) for s < k, c < cols; the panel's columns past cols are zeros.
/// The FMA kernels' k-major panels are filled in place. Kernels that pack rows of pairs (bfloat16)
/// get B filled into the thread's staging and packed from it while it is in L2 (filling a whole
/// operand first sent 5 MB to memory and back: ResNet-50's 512-channel 3 x 3 weight, a third of
/// its batch-1 forward); its rows padded by a line, so that a tile's column of writes does not
/// fall in one L1 set, and line-aligned (a kept scratch slot), so that a tile row's 64-byte write
/// is one line, not two (unaligned staging made that 3 x 3's forward 7% slower).
template <class K, class T, class Fill>
void pack_filled_panel(std::int64_t k, std::int64_t cols, std::int64_t steps, const Fill& fill,
                       typename K::Packed* dst) {
  constexpr std::int64_t kTile = 64;
  static_assert(K::kCols <= kTile, "pack_filled_panel: panels of at most 64 columns");
  if constexpr (is_fma_kernel_v<K>) {
    static_assert(K::kStep == 1, "pack_filled_panel: k-major panels");
    fill(dst, K::kCols);
    if (cols < K::kCols)
      for (std::int64_t s = 0; s < k; ++s) std::fill(dst + s * K::kCols + cols, dst + (s + 1) * K::kCols, T(0));
  } else {
    const std::int64_t ld = K::kCols + 64 / std::int64_t(sizeof(T));
    const PackedGemmScratch<T> staged(4, k * ld);
    fill(staged.get(), ld);
    pack_columns_panel<K>(staged.get(), ld, k, cols, 0, steps, dst);
  }
}

/// Every group's k x m weight operand B_g packed for kernel K, the groups' panels back to back.
/// fill(g, j0, cols, dst, ld) writes B_g's columns [j0, j0 + cols) (at most 64), every row:
/// dst[s ld + c] = B_g(s, j0 + c) for s < k, c < cols.
template <class K, class T, class Fill>
HostVector<typename K::Packed> pack_group_weights(std::int64_t groups, std::int64_t k, std::int64_t m, const Fill& fill) {
  const std::int64_t size = packed_panels_size<K>(k, m);
  HostVector<typename K::Packed> panels(std::size_t(groups * size));
  for (std::int64_t g = 0; g < groups; ++g)
    pack_all_panels<K>([&](std::int64_t j0, std::int64_t steps, typename K::Packed* dst) {
      const std::int64_t cols = std::min(K::kCols, m - j0);
      pack_filled_panel<K, T>(k, cols, steps, [&](T* to, std::int64_t ld) { fill(g, j0, cols, to, ld); }, dst);
    }, k, m, panels.data() + g * size);
  return panels;
}

/// dst[step_of[q] ld + c] = src[c ld_src + q] for q < k with step_of[q] >= 0 (the others are not
/// B's), c < cols: pack_group_weights's fill for a weight whose columns are rows of src, its
/// elements reordered by step_of. L x L tiles go through a packet transpose (simd::transpose_tile)
/// and each tile row to its step as one packet: an element at a time, each through the operand's
/// index tables, the pack of ResNet-50's 512-channel 3 x 3 weight was about half of its batch-1
/// convolution. Rows shorter than L (the input gradient's 3 x 3 kernels, a row per input channel)
/// are read as tiles too, past their end into the next rows, where `readable` elements from src
/// may be read; rows of one element each (1 x 1 kernels) are one run, copied as it is.
template <class T>
void fill_transposed_columns(const T* src, std::int64_t ld_src, std::int64_t k, std::int64_t cols,
                             const std::int64_t* step_of, T* dst, std::int64_t ld, std::int64_t readable) {
  if (k == 1 && ld_src == 1) {
    if (step_of[0] >= 0) std::memcpy(dst + step_of[0] * ld, src, std::size_t(cols) * sizeof(T));
    return;
  }
  constexpr std::int64_t L = simd::kTransposeLanes<T>;
  alignas(64) T tile[L * L];
  std::int64_t c0 = 0;
  for (; c0 + L <= cols; c0 += L) {
    const T* in = src + c0 * ld_src;
    std::int64_t q0 = 0;
    for (; q0 < k && (c0 + L - 1) * ld_src + q0 + L <= readable; q0 += L) {
      simd::transpose_tile(in + q0, ld_src, tile, L);
      for (std::int64_t q = q0; q < std::min(k, q0 + L); ++q)
        if (step_of[q] >= 0) std::memcpy(dst + step_of[q] * ld + c0, tile + (q - q0) * L, L * sizeof(T));
    }
    for (std::int64_t q = q0; q < k; ++q)
      if (step_of[q] >= 0)
        for (std::int64_t c = 0; c < L; ++c) dst[step_of[q] * ld + c0 + c] = in[c * ld_src + q];
  }
  for (std::int64_t q = 0; q < k; ++q)  // the columns past the last whole tile
    if (step_of[q] >= 0)
      for (std::int64_t c = c0; c < cols; ++c) dst[step_of[q] * ld + c] = src[c * ld_src + q];
}

/// The transformed weight of a Winograd convolution with k input and m output channels (the
/// operand winograd_product reads): U_xi(c, o) = (G g G^T)_xi of the 3 x 3 kernel g(kh, kw) =
/// kernel(o, c, kh, kw), as 16 groups of k x m panels of GemmFmaKernel<float>.
template <class Kernel>
HostVector<float> winograd_weights(std::int64_t k, std::int64_t m, const Kernel& kernel) {
  using K = GemmFmaKernel<float>;
  constexpr std::int64_t kCols = K::kCols;
  constexpr int D = simd::native_lanes<double>;
  using VD = simd::Vec<double, D>;
  const std::int64_t group = packed_panels_size<K>(k, m), panels = (m + kCols - 1) / kCols;
  HostVector<float> u(std::size_t(16 * group));
  // U = G g G^T in double, D output channels at a time, rounded once: U_xi(c, o) written where it
  // goes, at xi group + (o / kCols) k kCols + c kCols + o % kCols (a panel's columns past m zero);
  // the (panel, channel) pairs over the threads (a layer of 64 output channels has one panel)
  const int threads = threads_for(16 * k * m);
  WEFT_PRAGMA_OMP(omp parallel for collapse(2) num_threads(threads) schedule(static) if (threads > 1))
  for (std::int64_t p = 0; p < panels; ++p)
    for (std::int64_t c = 0; c < k; ++c) {
      const std::int64_t o0 = p * kCols, cols = std::min(kCols, m - o0);
      alignas(64) double g[9][kCols];  // the panel's kernels of channel c, tap-major
      for (std::int64_t j = 0; j < kCols; ++j)
        for (int t = 0; t < 9; ++t) g[t][j] = j < cols ? double(kernel(o0 + j, c, t / 3, t % 3)) : 0.0;
      float* const at = u.data() + p * k * kCols + c * kCols;
      const VD half = VD::broadcast(0.5);
      for (std::int64_t j = 0; j < kCols; j += D) {
        VD q[4][3];  // G g, down each column of the kernel
        for (int e = 0; e < 3; ++e) {
          const VD g0 = VD::load(g[e] + j), g1 = VD::load(g[3 + e] + j), g2 = VD::load(g[6 + e] + j);
          q[0][e] = g0, q[1][e] = (g0 + g1 + g2) * half, q[2][e] = (g0 - g1 + g2) * half, q[3][e] = g2;
        }
        for (int i = 0; i < 4; ++i) {  // (G g) G^T, along each row
          const VD row[4] = {q[i][0], (q[i][0] + q[i][1] + q[i][2]) * half, (q[i][0] - q[i][1] + q[i][2]) * half, q[i][2]};
          for (int e = 0; e < 4; ++e) simd::convert<float>(row[e]).store(at + (4 * i + e) * group + j);
        }
      }
    }
  return u;
}

/// Rows above and below, columns left and right, that a Winograd correlation of an h x w source
/// padded by pad_h, pad_w into out_h x out_w outputs reads: its 4 x 4 tiles start every 2 outputs,
/// so the last reaches 2 ceil(out / 2) + 1 - pad past the source's first row.
inline SourcePads winograd_pads(std::int64_t h, std::int64_t w, std::int64_t pad_h, std::int64_t pad_w,
                                std::int64_t out_h, std::int64_t out_w) {
  return {pad_h, std::max<std::int64_t>(0, (out_h + 1) / 2 * 2 + 2 - pad_h - h), pad_w,
          std::max<std::int64_t>(0, (out_w + 1) / 2 * 2 + 2 - pad_w - w)};
}

/// The source a Winograd correlation reads: src [batch, channels, h, w] copied channels-last with
/// the padding its tiles reach (winograd_pads), or src itself where it is channels-last already
/// and they reach nothing past it.
template <class T>
PatchSource<T> winograd_source(const Strided4<const T>& src, std::int64_t batch, std::int64_t channels, std::int64_t h,
                               std::int64_t w, std::int64_t pad_h, std::int64_t pad_w, std::int64_t out_h,
                               std::int64_t out_w) {
  return PatchSource<T>(src, batch, channels, h, w, channels, 9, winograd_pads(h, w, pad_h, pad_w, out_h, out_w));
}

/// The forward's transformed weight for Winograd (conv_winograd_shape): U of the kernels w[o, c].
inline HostVector<float> winograd_forward_weights(const ConvGeometry& geo, const float* w) {
  return winograd_weights(geo.in_channels, geo.out_channels, [&](std::int64_t o, std::int64_t c, int kh, int kw) {
    return w[(o * geo.in_channels + c) * 9 + kh * 3 + kw];
  });
}

/// The weight operand of the forward for every group, prepacked for ConvKernel<T>: group g's k x
/// m matrix is B(s, o) = w[g m + o, channel(s), tap(s)] (w contiguous [O, C/g, kH, kW]) in the
/// column order of `patches` (the forward's patch operand: conv_forward_patches).
template <class T>
HostVector<typename ConvKernel<T>::Packed> conv_forward_weights(const ConvGeometry& geo, const PatchOperand<T>& patches,
                                                                 const T* w) {
  const std::int64_t k = geo.reduction(), m = geo.out_per_group(), taps = geo.taps();
  // B_g(s, o) = w_g[o, q] with q = channel(s) taps + tap(s): the kernel's element q goes to step s
  std::vector<std::int64_t> step_of(static_cast<std::size_t>(k));
  for (std::int64_t s = 0; s < k; ++s) step_of[patches.column_channel[s] * taps + patches.column_tap[s]] = s;
  return pack_group_weights<ConvKernel<T>, T>(
      geo.groups, k, m, [&](std::int64_t g, std::int64_t j0, std::int64_t cols, T* dst, std::int64_t ld) {
        fill_transposed_columns(w + (g * m + j0) * k, k, k, cols, step_of.data(), dst, ld,
                                (geo.out_channels - g * m - j0) * k);
      });
}

/// The forward's patch operand of group g: x's windows at the output positions, read from
/// `source` (x's PatchSource) when given.
template <class T>
PatchOperand<T> conv_forward_patches(const ConvGeometry& geo, const Strided4<const T>& x, std::int64_t g,
                                     const PatchSource<T>* source = nullptr) {
  PatchOperand<T> p;
  p.src = x;
  p.src_h = geo.in_h, p.src_w = geo.in_w;
  p.batch = geo.batch, p.grid_h = geo.out_h, p.grid_w = geo.out_w;
  p.step_h = geo.stride_h, p.step_w = geo.stride_w, p.origin_h = -geo.pad_h, p.origin_w = -geo.pad_w;
  p.channel0 = g * geo.in_per_group(), p.channels = geo.in_per_group();
  for (std::int64_t kh = 0; kh < geo.kernel_h; ++kh)
    for (std::int64_t kw = 0; kw < geo.kernel_w; ++kw) {
      p.tap_h.push_back(kh * geo.dilation_h);
      p.tap_w.push_back(kw * geo.dilation_w);
    }
  if (source) source->rebase(p);
  p.finish();
  return p;
}

/// Bytes of a padded channels-last copy that one pass copies and the product then reads: the batch
/// goes in slabs of whole images about this large, so that each slab's copy is still in cache (L2
/// and L3) when the product reads it. Copied whole, ResNet-18's first-stage input (19 MB padded,
/// batch 64) went to memory and came back. conv_slab_bytes: the tests lower it to split small
/// batches too.
inline std::atomic<std::int64_t> conv_slab_bytes{std::int64_t(8) << 20};

/// Images a slab for a source of `channels` x (h + 2 pad_h) x (w + 2 pad_w) elements of T an
/// image; the whole batch where the patches are read without a copy.
template <class T>
std::int64_t conv_slab_images(std::int64_t batch, std::int64_t channels, std::int64_t h, std::int64_t w, bool copied) {
  const std::int64_t image = std::max<std::int64_t>(1, channels * h * w * std::int64_t(sizeof(T)));
  return copied ? std::clamp<std::int64_t>(conv_slab_bytes.load(std::memory_order_relaxed) / image, 1, batch) : batch;
}

/// The 4-D array of images n0 .. of a (the same strides).
template <class T>
Strided4<T> images_from(const Strided4<T>& a, std::int64_t n0) {
  return Strided4<T>{a.data + n0 * a.sn, a.sn, a.sc, a.sh, a.sw};
}

/// a(n, c, i, j) = value for every element of the batch x channels x h x w array a (any strides):
/// runs along its unit-stride dim (w, or the channels where they are adjacent), each run as long
/// as the dims outside it continue it (a dense array: one run), filled in pieces on the threads.
template <class T>
void fill_strided(const Strided4<T>& a, std::int64_t batch, std::int64_t channels, std::int64_t h, std::int64_t w,
                  T value) {
  const bool channels_inner = a.sc == 1 && a.sw != 1;  // dims outermost first
  const std::int64_t size[4] = {batch, channels_inner ? h : channels, channels_inner ? w : h, channels_inner ? channels : w};
  const std::int64_t stride[4] = {a.sn, channels_inner ? a.sh : a.sc, channels_inner ? a.sw : a.sh, channels_inner ? a.sc : a.sw};
  int outer = 3;
  std::int64_t run = size[3];
  while (outer > 0 && stride[outer - 1] == run * stride[3]) run *= size[--outer];
  std::int64_t runs = 1;
  for (int d = 0; d < outer; ++d) runs *= size[d];
  constexpr std::int64_t kPiece = std::int64_t(1) << 14;
  const std::int64_t pieces = (run + kPiece - 1) / kPiece;
  const int threads = threads_for(runs * run);
  WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) schedule(static) if (threads > 1))
  for (std::int64_t task = 0; task < runs * pieces; ++task) {
    std::int64_t r = task / pieces, offset = 0;
    for (int d = outer - 1; d >= 0; --d) offset += r % size[d] * stride[d], r /= size[d];
    const std::int64_t e0 = task % pieces * kPiece, e1 = std::min(run, e0 + kPiece);
    T* p = a.data + offset;
    if (stride[3] == 1) std::fill(p + e0, p + e1, value);
    else
      for (std::int64_t e = e0; e < e1; ++e) p[e * stride[3]] = value;
  }
}

/// x's source for the forward's patches (and the weight gradient's): x, or its channels-last copy
/// padded as far as the windows reach.
template <class T>
SourcePads conv_forward_pads(const ConvGeometry& geo, const Strided4<const T>& x) {
  SourcePads pads;
  conv_forward_patches(geo, x, 0).reach(pads);
  return pads;
}
template <class T>
PatchSource<T> conv_forward_source(const ConvGeometry& geo, const Strided4<const T>& x) {
  return PatchSource<T>(x, geo.batch, geo.in_channels, geo.in_h, geo.in_w, geo.in_per_group(), geo.taps(),
                        conv_forward_pads(geo, x));
}

/// Whether a convolution reads only every stride-th row and column of x: a 1 x 1 kernel of stride
/// more than 1, without padding. It is then the convolution of stride 1 over x's sampled view
/// (sampled_geometry, sampled_view): the channels-last copy holds only the elements read (copying
/// all of x was 40% of ResNet-18's bfloat16 strided shortcut; the sampled quarter, 10%), and the
/// input gradient is that of stride 1 into dx's sampled view, the rest of dx zeros.
inline bool conv_sampled_input(const ConvGeometry& geo) {
  return geo.kernel_h == 1 && geo.kernel_w == 1 && geo.pad_h == 0 && geo.pad_w == 0 &&
         (geo.stride_h > 1 || geo.stride_w > 1);
}
inline ConvGeometry sampled_geometry(const ConvGeometry& geo) {
  ConvGeometry sampled = geo;
  sampled.in_h = geo.out_h, sampled.in_w = geo.out_w;
  sampled.stride_h = sampled.stride_w = sampled.dilation_h = sampled.dilation_w = 1;
  return sampled;
}
/// x's elements at (stride_h i, stride_w j): the input of sampled_geometry(geo).
template <class T>
Strided4<T> sampled_view(const ConvGeometry& geo, const Strided4<T>& x) {
  return Strided4<T>{x.data, x.sn, x.sc, x.sh * geo.stride_h, x.sw * geo.stride_w};
}

/// How conv2d_forward in T reads its patches, for logs, from x's strides (sc, sh, sw) into an
/// output of strides (out_sc, out_sw): the product of a strided 1 x 1 kernel's sampled view as
/// conv2d_forward runs it, by output positions (conv_forward_by_positions) or as positions x
/// channels (conv_patches_text).
template <class T>
std::string conv_forward_text(const ConvGeometry& geo, std::int64_t x_sc, std::int64_t x_sh, std::int64_t x_sw,
                              std::int64_t out_sc, std::int64_t out_sw) {
  const bool sampled = conv_sampled_input(geo);
  const ConvGeometry product = sampled ? sampled_geometry(geo) : geo;
  if (sampled) x_sh *= geo.stride_h, x_sw *= geo.stride_w;
  if (!conv_forward_by_positions<T>(product, x_sh, x_sw, out_sc, out_sw)) return conv_patches_text<T>(geo, x_sc);
  if (conv_pointwise_planes<T>(product, x_sh, x_sw))
    return conv_pointwise_gathers(product, x_sh, x_sw)
               ? "implicit GEMM by output positions (rows the output channels), x's sampled positions gathered"
               : "implicit GEMM by output positions (rows the output channels), x's rows packed as they are";
  if (std::is_same_v<T, float> || std::is_same_v<T, double>)
    return "direct by output positions (rows the output channels), patches read in place from runs of x's rows";
  return "implicit GEMM by output positions (rows the output channels), patches copied from runs of x's rows";
}

/// For each group g: the rows x k x m product of its patch operand (read from one source) and its
/// weight panels, finish(g, i0, i1, j0, j1, block, ld) receiving each finished block: the direct
/// product where conv_direct<T>(channels) (patches read in place), else the implicit GEMM on
/// ConvKernel<T>.
template <class T, class Finish>
void conv_product(const std::vector<PatchOperand<T>>& patches, std::int64_t k, std::int64_t m,
                  const typename ConvKernel<T>::Packed* weights, int threads, const Finish& finish) {
  const PatchOperand<T>& first = patches[0];
  if constexpr (direct_kernel_built_v<T>) {
    if (conv_direct<T>(first.channels) && first.channels_inner) {
      std::vector<std::uint64_t> row_taps, column_taps;  // the taps each row reaches in the data
      first.data_taps(row_taps, column_taps);
      // every group's windows at the same places; group g's columns at its channel0 (first's is 0)
      direct_conv_product<T>(
          std::int64_t(patches.size()), first.rows(), first.grid_h * first.grid_w, k, m,
          [&](std::int64_t g) { return first.src.data + (patches[g].channel0 - first.channel0) * first.src.sc; },
          [&](std::int64_t, std::int64_t i) {
            std::int64_t base, h0, w0;
            first.row_origin(i, base, h0, w0);
            return base;
          },
          [&](std::int64_t s) { return first.column_offset[s]; }, [&](std::int64_t s) { return first.column_tap[s]; },
          [&](std::int64_t i) {
            const std::int64_t b = i % first.grid_w, a = i / first.grid_w % first.grid_h;
            return row_taps[a] & column_taps[b];
          },
          weights, threads, finish);
      return;
    }
  }
  implicit_gemm<ConvKernel<T>>(std::int64_t(patches.size()), first.rows(), k, m,
                               [&](std::int64_t g) -> const PatchOperand<T>& { return patches[g]; }, weights, threads,
                               finish);
}

/// The forward's product: finish(g, i0, i1, j0, j1, block, ld) receives each finished block, rows
/// the output positions (n, i, j) of the batch, columns group g's output channels, the sums in
/// ConvKernel<T>::Elem (x any strides; w contiguous [O, C/g, kH, kW], or its panels `prepacked`
/// by conv_forward_weights when not null).
template <class T, class Finish>
void conv_forward_product(const ConvGeometry& geo, const Strided4<const T>& x, const T* w,
                          const typename ConvKernel<T>::Packed* prepacked, const Finish& finish) {
  const std::int64_t plane = geo.out_h * geo.out_w;
  const std::int64_t slab =
      conv_slab_images<T>(geo.batch, geo.in_channels, geo.in_h + 2 * geo.pad_h, geo.in_w + 2 * geo.pad_w,
                          patches_channel_runs<T>(x.sc, geo.in_per_group(), geo.taps()));
  HostVector<typename ConvKernel<T>::Packed> own;
  for (std::int64_t n0 = 0; n0 < geo.batch; n0 += slab) {  // images n0 .. n0 + part.batch - 1
    ConvGeometry part = geo;
    part.batch = std::min(slab, geo.batch - n0);
    const Strided4<const T> xs = images_from(x, n0);
    if constexpr (std::is_same_v<T, float>) {
      if (conv_winograd<T>(geo)) {  // prepacked: the transformed weight after the direct product's panels
        const float* u = prepacked ? prepacked + packed_panels_size<ConvKernel<T>>(geo.reduction(), geo.out_channels) : nullptr;
        if (!u) own = winograd_forward_weights(geo, w), u = own.data();
        const PatchSource<T> source = winograd_source(xs, part.batch, geo.in_channels, geo.in_h, geo.in_w, geo.pad_h,
                                                      geo.pad_w, geo.out_h, geo.out_w);
        const Strided4<const T>& v = source.view();
        winograd_product(v.data, v.sn, v.sh, v.sw, part.batch, geo.out_h, geo.out_w, geo.in_channels, geo.out_channels, u,
                         threads_for(part.macs() / 64),
                         [&](std::int64_t g, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1,
                             const float* block, std::int64_t ld) { finish(g, n0 * plane + i0, n0 * plane + i1, j0, j1, block, ld); });
        continue;
      }
    }
    const PatchSource<T> source = conv_forward_source(part, xs);
    std::vector<PatchOperand<T>> patches;
    for (std::int64_t g = 0; g < geo.groups; ++g) patches.push_back(conv_forward_patches(part, xs, g, &source));
    if (!prepacked) own = conv_forward_weights(geo, patches[0], w), prepacked = own.data();
    conv_product(patches, geo.reduction(), geo.out_per_group(), prepacked, threads_for(part.macs() / 64),
                 [&](std::int64_t g, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1, const auto* block,
                     std::int64_t ld) { finish(g, n0 * plane + i0, n0 * plane + i1, j0, j1, block, ld); });
  }
}

/// o[e] = T(value(e)) for e < count, value(e) of the block's type B: from float sums into a
/// 16-bit float a packet at a time (simd::store_float, bit-identical to T(float)); the rounding
/// an element at a time was 15% of a ResNet-18 bfloat16 layer's forward.
template <class T, class B, class Value>
void store_values(T* o, std::int64_t count, const Value& value) {
  std::int64_t e = 0;
  if constexpr (is_16bit_float_v<T> && std::is_same_v<B, float>) {
    constexpr int L = simd::native_lanes<float>;
    alignas(64) float packet[L];
    for (; e + L <= count; e += L) {
      for (int l = 0; l < L; ++l) packet[l] = value(e + l);
      simd::store_float<L>(o + e, simd::Vec<float, L>::load(packet));
    }
  }
  for (; e < count; ++e) o[e] = T(value(e));
}

/// o[e] = T(from[e]) for e < count: store_values for values stored as they are, packets read
/// straight from the block (an element a time into a packet was 1.5 cycles an element, half of
/// ResNet-18's bfloat16 stem forward). Always inlined: a call a tile row of 16 was 12% of it.
template <class T, class B>
[[gnu::always_inline]] inline void store_run(T* o, const B* from, std::int64_t count) {
  std::int64_t e = 0;
  if constexpr (is_16bit_float_v<T> && std::is_same_v<B, float>) {
    constexpr int L = simd::native_lanes<float>;
    for (; e + L <= count; e += L) simd::store_float<L>(o + e, simd::Vec<float, L>::load(from + e));
  }
  for (; e < count; ++e) o[e] = T(from[e]);
}

/// store_block's value for blocks stored as they are (rounded to T where T is narrower).
struct BlockAsIs {
  template <class B>
  B operator()(B v, std::int64_t, std::int64_t) const { return v; }
};

/// Stores a finished block (rows = positions i0 .. i1 - 1 of a [batch, grid_h, grid_w] grid,
/// columns = channels c0 + j0 .. c0 + j1 - 1) into `dst` through element offsets: row i lands at
/// its position's offset (n, h0 + a step_h, w0 + b step_w), column j at channel c0 + j, and
/// value(v, i, j) is what is written. Rows go innermost where channels are not adjacent (NCHW:
/// positions are), columns innermost where they are (channels-last): a block written across its
/// rows into NCHW would touch a new line per element. The block may be wider than T (bfloat16
/// outputs from float sums): each value is rounded once, as it is written.
template <class T, class B, class Value>
void store_block(const Strided4<T>& dst, std::int64_t grid_h, std::int64_t grid_w, std::int64_t step_h,
                 std::int64_t step_w, std::int64_t h0, std::int64_t w0, std::int64_t c0, std::int64_t i0,
                 std::int64_t i1, std::int64_t j0, std::int64_t j1, const B* block, std::int64_t ld,
                 const Value& value) {
  constexpr std::int64_t kMaxRows = 512;  // a block's rows (kBlockRows) fit
  std::int64_t row_offset[kMaxRows];
  const std::int64_t plane = grid_h * grid_w;
  // positions stepped in order (n, a, b), no division a row
  std::int64_t n = i0 / plane, a = (i0 - n * plane) / grid_w, b = i0 - n * plane - a * grid_w;
  for (std::int64_t i = i0; i < i1; ++i) {
    row_offset[i - i0] = n * dst.sn + (h0 + a * step_h) * dst.sh + (w0 + b * step_w) * dst.sw;
    if (++b == grid_w) {
      b = 0;
      if (++a == grid_h) a = 0, ++n;
    }
  }
  if (dst.sc == 1) {
    for (std::int64_t i = i0; i < i1; ++i) {
      T* out = dst.data + row_offset[i - i0] + c0 + j0;
      const B* src = block + (i - i0) * ld;
      if constexpr (std::is_same_v<Value, BlockAsIs>) store_run(out, src, j1 - j0);
      else store_values<T, B>(out, j1 - j0, [&](std::int64_t e) { return value(src[e], i, j0 + e); });
    }
  } else {
    // Tiles of L rows x L columns transposed as packets (simd::transpose_tile) into `column`, then
    // written down each channel: an element read L apart in the block costs a line each. The row
    // tiles inner, so that a channel's run continues where the last tile's ended (a 16-bit run of
    // L is half a line).
    constexpr std::int64_t L = simd::kTransposeLanes<B>;
    alignas(64) B column[L * L];
    for (std::int64_t jb = j0; jb < j1; jb += L)
      for (std::int64_t ib = i0; ib < i1; ib += L) {
        const std::int64_t ni = std::min(L, i1 - ib), nj = std::min(L, j1 - jb);
        const B* src = block + (ib - i0) * ld + (jb - j0);
        if (ni == L && nj == L) simd::transpose_tile(src, ld, column, L);
        else
          for (std::int64_t i = 0; i < ni; ++i)
            for (std::int64_t j = 0; j < nj; ++j) column[j * L + i] = src[i * ld + j];
        // positions one element apart (an output row's): a contiguous run per channel
        const bool run = row_offset[ib - i0 + ni - 1] - row_offset[ib - i0] == (ni - 1) * dst.sw && dst.sw == 1;
        for (std::int64_t j = 0; j < nj; ++j) {
          T* out = dst.data + (c0 + jb + j) * dst.sc;
          const B* from = column + j * L;
          if (run) {
            if constexpr (std::is_same_v<Value, BlockAsIs>) store_run(out + row_offset[ib - i0], from, ni);
            else
              store_values<T, B>(out + row_offset[ib - i0], ni,
                                 [&](std::int64_t i) { return value(from[i], ib + i, jb + j); });
          } else {
            for (std::int64_t i = 0; i < ni; ++i) out[row_offset[ib - i0 + i]] = T(value(from[i], ib + i, jb + j));
          }
        }
      }
  }
}

/// x's rows as conv2d_forward_by_positions reads them, each row split into its stride_w = s phases
/// and padded with zeros: tap d = kw dilation_w - pad_w of output column j reads
///   x[n, c, h, j s + d] = row(n, c, h, r)[j + shift],  r = d mod s, shift = (d - r) / s
/// for every j < `columns` (the output's width rounded up to the reader's tiles), zero where that
/// lies in the padding. One pass over x (a 224 x 224 stem's x is 1/12 of its patches): the
/// elements of a tap for consecutive output columns are then consecutive, and a row is read
/// without bounds checks. Picking every s-th element of x's rows while filling the patches ran an
/// element at a time, 30% of ResNet-50's stem.
template <class T>
class PhaseRows {
 public:
  PhaseRows(const ConvGeometry& geo, const Strided4<const T>& x, std::int64_t columns)
      : step_(geo.stride_w), channels_(geo.in_channels), height_(geo.in_h) {
    // the taps' shifts run from floor(-pad / s) to floor(((kW - 1) dilation - pad) / s)
    const std::int64_t first = tap_of(-geo.pad_w).shift, last = tap_of((geo.kernel_w - 1) * geo.dilation_w - geo.pad_w).shift;
    before_ = std::max<std::int64_t>(0, -first);
    width_ = before_ + columns + std::max<std::int64_t>(0, last);
    const std::int64_t rows = geo.batch * geo.in_channels * geo.in_h;
    data_.resize(std::size_t(rows * step_ * width_));
    const int threads = threads_for(rows * step_ * width_);
    WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) schedule(static) if (threads > 1))
    for (std::int64_t row = 0; row < rows; ++row) {
      const std::int64_t n = row / (geo.in_channels * geo.in_h), c = row / geo.in_h % geo.in_channels, h = row % geo.in_h;
      const T* from = x.data + n * x.sn + c * x.sc + h * x.sh;
      T* to = data_.data() + row * step_ * width_;
      std::fill(to, to + step_ * width_, T(0));
      for (std::int64_t r = 0; r < step_; ++r) {
        const std::int64_t count = std::min((geo.in_w - r + step_ - 1) / step_, width_ - before_);
        T* phase = to + r * width_ + before_;
        if (x.sw == 1 && step_ == 1) std::copy(from, from + count, phase);
        else for (std::int64_t u = 0; u < count; ++u) phase[u] = from[(u * step_ + r) * x.sw];
      }
    }
  }
  struct Tap {
    std::int64_t phase, shift;
    std::int64_t offset(std::int64_t width) const { return phase * width + shift; }  // from row(n, c, h, 0)
  };
  /// Where tap d = kw dilation_w - pad_w reads.
  Tap tap_of(std::int64_t d) const {
    const std::int64_t r = ((d % step_) + step_) % step_;
    return {r, (d - r) / step_};
  }
  /// Phase 0 of row (n, c, h) at output column 0; phase r starts width() later.
  const T* row(std::int64_t n, std::int64_t c, std::int64_t h) const {
    return data_.data() + ((n * channels_ + c) * height_ + h) * step_ * width_ + before_;
  }
  std::int64_t width() const { return width_; }

 private:
  std::int64_t step_, channels_, height_, before_ = 0, width_ = 0;
  HostVector<T> data_;
};

/// The patch operand of conv2d_forward_by_positions for image n, columns j0 .. j0 + cols - 1 (the
/// output positions p = i out_w + j; cols <= 64), every row s = (c, kh, kw) (channel-major, as w's
/// rows):
///   dst[s ld + p - j0] = x[n, c, i stride_h - pad_h + kh dilation_h, j stride_w - pad_w + kw dilation_w]
/// zero where that lies in the padding: each output row's piece a copy from a PhaseRows row. The
/// pieces and taps are worked out once, not per row (their divisions were a third of the fill).
template <class T>
void fill_position_columns(const ConvGeometry& geo, const PhaseRows<T>& x, std::int64_t n, std::int64_t j0,
                           std::int64_t cols, T* dst, std::int64_t ld) {
  struct Piece {
    std::int64_t i, j, run;  // output row i from column j, `run` positions
  };
  constexpr std::int64_t kMaxCols = 64;
  Piece pieces[kMaxCols];
  std::int64_t count = 0;
  for (std::int64_t p = j0; p < j0 + cols; p += pieces[count - 1].run) {
    const std::int64_t i = p / geo.out_w, j = p % geo.out_w;
    pieces[count++] = {i, j, std::min(geo.out_w - j, j0 + cols - p)};
  }
  T* row = dst;
  for (std::int64_t c = 0; c < geo.in_channels; ++c)
    for (std::int64_t kh = 0; kh < geo.kernel_h; ++kh)
      for (std::int64_t kw = 0; kw < geo.kernel_w; ++kw, row += ld) {
        const std::int64_t offset = x.tap_of(kw * geo.dilation_w - geo.pad_w).offset(x.width());
        T* to = row;
        for (std::int64_t q = 0; q < count; to += pieces[q++].run) {
          const std::int64_t ih = pieces[q].i * geo.stride_h - geo.pad_h + kh * geo.dilation_h;
          if (ih < 0 || ih >= geo.in_h) std::fill(to, to + pieces[q].run, T(0));
          else std::copy_n(x.row(n, c, ih) + offset + pieces[q].j, pieces[q].run, to);
        }
      }
}

/// Register tile of conv2d_forward_positions_direct: kRows output channels x 2 packets of
/// consecutive output columns (16 registers: 6 x 2 = 12 accumulators; 32: 8 x 2 = 16, so that a
/// 64-channel stem fills whole tiles and a 32 x 32 output two tiles a row).
template <class T>
struct PositionTile {
  static constexpr int kLanes = simd::native_lanes<T>;
  static constexpr int kRows = simd::kBytes >= 64 ? 8 : 6;
  static constexpr int kVecs = 2;
  static constexpr int kCols = kVecs * kLanes;
};

/// out = conv(x, w) with the epilogue for conv_forward_by_positions in float and double, read in
/// place: per output row (n, i), tiles of PositionTile's kRows output channels x kCols columns
///   Y(o, j) = sum over (c, kh, kw) of W(o, c, kh, kw) x[n, c, i stride_h - pad_h + kh dilation_h, j s + d(kw)]
/// whose kCols inputs of a tap are one load from a PhaseRows row and whose weights are broadcasts
/// from panels of kRows channels (w's rows, packed once per call). Taps whose input row lies in
/// the padding are skipped. Nothing of the patches is packed: packing them (k x 256 columns a
/// task, each element feeding 64 channels' FMAs) was 30% of ResNet-50's 7 x 7 stem forward.
template <class T, class StoreRow>
void conv2d_forward_positions_direct(const ConvGeometry& geo, const Strided4<const T>& x, const T* w,
                                     const Strided4<T>& out, bool plain, const StoreRow& store_row) {
  using Tile = PositionTile<T>;
  constexpr int R = Tile::kRows, NV = Tile::kVecs, W = Tile::kLanes, C = Tile::kCols;
  using V = simd::Vec<T, W>;
  const std::int64_t k = geo.reduction(), m = geo.out_channels, taps_w = geo.kernel_w;
  const std::int64_t panels = (m + R - 1) / R, segments = (geo.out_w + C - 1) / C;  // segments: tiles a row
  // panel t: packed[(t k + s) R + r] = w[t R + r, s], zeros past m
  HostVector<T> packed(std::size_t(panels * k * R), T(0));
  for (std::int64_t o = 0; o < m; ++o)
    for (std::int64_t s = 0; s < k; ++s) packed[std::size_t((o / R * k + s) * R + o % R)] = w[o * k + s];
  const PhaseRows<T> rows(geo, x, segments * C);
  std::vector<std::int64_t> tap_offset(static_cast<std::size_t>(taps_w));
  for (std::int64_t kw = 0; kw < taps_w; ++kw)
    tap_offset[std::size_t(kw)] = rows.tap_of(kw * geo.dilation_w - geo.pad_w).offset(rows.width());
  const std::int64_t out_rows = geo.batch * geo.out_h;
  const int threads = threads_for(out_rows * m * k * geo.out_w / 64);
  WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1))
  for (std::int64_t row = 0; row < out_rows; ++row) {
    const std::int64_t n = row / geo.out_h, i = row % geo.out_h;
    alignas(64) T block[R * C];
    for (std::int64_t t = 0; t < panels; ++t)
      for (std::int64_t j0 = 0; j0 < geo.out_w; j0 += C) {
        V acc[R][NV];
        for (int r = 0; r < R; ++r)
          for (int v = 0; v < NV; ++v) acc[r][v] = V::broadcast(T(0));
        const T* a = packed.data() + t * k * R;
        for (std::int64_t c = 0; c < geo.in_channels; ++c)
          for (std::int64_t kh = 0; kh < geo.kernel_h; ++kh, a += taps_w * R) {
            const std::int64_t ih = i * geo.stride_h - geo.pad_h + kh * geo.dilation_h;
            if (ih < 0 || ih >= geo.in_h) continue;
            const T* from = rows.row(n, c, ih) + j0;
            for (std::int64_t kw = 0; kw < taps_w; ++kw) {
              V b[NV];
              for (int v = 0; v < NV; ++v) b[v] = V::load(from + tap_offset[std::size_t(kw)] + v * W);
              const T* ak = a + kw * R;
              for (int r = 0; r < R; ++r) {
                const V weight = V::broadcast(ak[r]);
                for (int v = 0; v < NV; ++v) acc[r][v] = simd::mul_add(weight, b[v], acc[r][v]);
              }
            }
          }
        const std::int64_t o0 = t * R, o1 = std::min(m, o0 + R), run = std::min<std::int64_t>(C, geo.out_w - j0);
        if (plain && out.sw == 1 && o1 - o0 == R && run == C) {  // straight from the registers into out's rows
          for (int r = 0; r < R; ++r)
            for (int v = 0; v < NV; ++v) acc[r][v].store(out.data + out.offset(n, o0 + r, i, j0) + v * W);
          continue;
        }
        for (int r = 0; r < R; ++r)
          for (int v = 0; v < NV; ++v) acc[r][v].store(block + r * C + v * W);
        store_row(n, o0, o1, i, j0, run, block, C);
      }
  }
}

/// out = conv(x, w) with the epilogue for conv_forward_by_positions, on ConvKernel<T>: per image
/// n, the O x k x (out_h out_w) product Y_n(o, p) = sum_s W(o, s) P_n(s, p) of the weight as it
/// is (rows of [O, C kH kW]) and the patches; each finished block's rows go to out[n, o] as runs,
/// with bias[o], relu and the residual applied. Float and double with few channels read the
/// patches in place (conv2d_forward_positions_direct). The others run the packed GEMM split as
/// conv_position_tasks says (one product per image over both threads packed all of ResNet-50's
/// stem patches, 7.4 MB, before multiplying them): a conv_pointwise_planes product packs x's
/// rows as matmul packs its b, or gathers a sampled x's positions into its panels; bfloat16,
/// whose kernels take k in pairs (or fours), fills its patch panels from x's phase rows
/// (fill_position_columns).
template <class T>
void conv2d_forward_by_positions(const ConvGeometry& geo, const Strided4<const T>& x, const T* w,
                                 const ConvEpilogue<T>& epilogue, const Strided4<T>& out) {
  using K = ConvKernel<T>;
  using B = typename K::Elem;  // the finished blocks' type: T, or float for bfloat16
  using Packed = typename K::Packed;
  const ConvEpilogue<T>& e = epilogue;
  // rows [o0, o1) x output row i's columns [j, j + run) of image n's product, block(o, q) at
  // block[(o - o0) ld + q]
  auto store_row = [&](std::int64_t n, std::int64_t o0, std::int64_t o1, std::int64_t i, std::int64_t j, std::int64_t run,
                       const B* block, std::int64_t ld) {
    for (std::int64_t o = o0; o < o1; ++o) {
      T* to = out.data + out.offset(n, o, i, j);
      const B* values = block + (o - o0) * ld;
      if (e.none()) {
        store_run(to, values, run);
      } else {
        const T* residual = e.residual.data ? e.residual.data + e.residual.offset(n, o, i, j) : nullptr;
        store_values<T, B>(to, run, [&](std::int64_t q) {
          return e.apply(values[q], o, residual ? residual + q * e.residual.sw : nullptr);
        });
      }
    }
  };
  const bool pointwise = conv_pointwise_planes<T>(geo, x.sh, x.sw);
  const bool gathers = pointwise && conv_pointwise_gathers(geo, x.sh, x.sw);
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (!pointwise) return conv2d_forward_positions_direct<T>(geo, x, w, out, e.none(), store_row);
  }
  const std::int64_t k = geo.reduction(), m = geo.out_channels, plane = geo.out_h * geo.out_w;
  const std::int64_t steps = (k + K::kStep - 1) / K::kStep, row_panels = (m + K::kRows - 1) / K::kRows;
  HostVector<Packed> weights(std::size_t(row_panels * steps * K::kStepElemsA));
  for (std::int64_t t = 0; t < row_panels; ++t)
    pack_rows_panel<K>(w, k, m, k, t * K::kRows, steps, weights.data() + t * steps * K::kStepElemsA);
  std::optional<PhaseRows<T>> rows;
  if (!pointwise) rows.emplace(geo, x, geo.out_w);
  // image n's product over positions [c0, c0 + cols) on `threads` threads
  auto product = [&](std::int64_t n, std::int64_t c0, std::int64_t cols, int threads) {
    HostVector<T> gathered;  // a sampled x's positions of this product, [C, cols]
    if (gathers) {
      gathered.resize(std::size_t(k * cols));
      gather_position_columns(geo, x, n, c0, cols, gathered.data(), cols);
    }
    auto pack_b = [&](std::int64_t j0, std::int64_t panel_steps, Packed* dst) {
      if (gathers) return pack_columns_panel<K>(gathered.data(), cols, k, cols, j0, panel_steps, dst);
      if (pointwise) return pack_columns_panel<K>(x.data + n * x.sn, x.sc, k, c0 + cols, c0 + j0, panel_steps, dst);
      const std::int64_t panel_cols = std::min(K::kCols, cols - j0);
      pack_filled_panel<K, T>(k, panel_cols, panel_steps, [&](T* to, std::int64_t ld) {
        fill_position_columns(geo, *rows, n, c0 + j0, panel_cols, to, ld);
      }, dst);
    };
    auto done = [&](std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1, const B* block,
                    std::int64_t ld) {
      for (std::int64_t p = c0 + j0; p < c0 + j1;) {  // a run per output row the block's columns reach
        const std::int64_t i = p / geo.out_w, j = p % geo.out_w, run = std::min(geo.out_w - j, c0 + j1 - p);
        store_row(n, i0, i1, i, j, run, block + (p - c0 - j0), ld);
        p += run;
      }
    };
    gemm_packed<K>(PrepackedPanels<Packed>{weights.data()}, pack_b, m, k, cols, threads,
                   GemmBlockEpilogue<decltype(done)>{done});
  };
  const PositionTasks split = conv_position_tasks<T>(geo);
  if (split.tasks) {
    const std::int64_t chunks = split.chunks;
    WEFT_PRAGMA_OMP(omp parallel for num_threads(split.threads) schedule(dynamic, 1) if (split.threads > 1))
    for (std::int64_t task = 0; task < geo.batch * chunks; ++task) {
      const std::int64_t n = task / chunks, c0 = task % chunks * K::kBlockCols;
      product(n, c0, std::min(K::kBlockCols, plane - c0), 1);
    }
    return;
  }
  for_each_packed_product(geo.batch, m, k, plane, [&](std::int64_t n, int image_threads) {
    product(n, 0, plane, image_threads);
  });
}

/// out = conv(x, w) with the epilogue, on ConvKernel<T> (float, double; bfloat16 where
/// conv_native: the epilogue on the fp32 sums, rounded once) (x, out any strides; w contiguous
/// [O, C/g, kH, kW], or prepacked by conv_forward_weights when `prepacked` is not null).
template <class T>
void conv2d_forward(const ConvGeometry& geo, const Strided4<const T>& x, const T* w,
                    const typename ConvKernel<T>::Packed* prepacked, const ConvEpilogue<T>& epilogue,
                    const Strided4<T>& out) {
  using B = typename ConvKernel<T>::Elem;  // the finished blocks' type: T, or float for bfloat16
  if (conv_sampled_input(geo)) return conv2d_forward(sampled_geometry(geo), sampled_view(geo, x), w, prepacked, epilogue, out);
  if (conv_forward_by_positions<T>(geo, x.sh, x.sw, out.sc, out.sw)) return conv2d_forward_by_positions(geo, x, w, epilogue, out);
  const std::int64_t m = geo.out_per_group(), plane = geo.out_h * geo.out_w;
  auto finish = [&](std::int64_t g, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1, const B* block,
                    std::int64_t ld) {
    const ConvEpilogue<T>& e = epilogue;
    if (e.none()) {
      store_block(out, geo.out_h, geo.out_w, 1, 1, 0, 0, g * m, i0, i1, j0, j1, block, ld, BlockAsIs{});
      return;
    }
    auto value = [&](B y, std::int64_t i, std::int64_t j) {
      const std::int64_t o = g * m + j;
      const T* r = nullptr;
      if (e.residual.data) {
        const std::int64_t n = i / plane, oi = (i - n * plane) / geo.out_w, oj = i - n * plane - oi * geo.out_w;
        r = e.residual.data + e.residual.offset(n, o, oi, oj);
      }
      return e.apply(y, o, r);
    };
    store_block(out, geo.out_h, geo.out_w, 1, 1, 0, 0, g * m, i0, i1, j0, j1, block, ld, value);
  };
  conv_forward_product(geo, x, w, prepacked, finish);
}

/// Whether the input gradient runs by taps (conv2d_backward_input_by_taps): few input channels a
/// group (a stem's 3), against enough output channels for the product's depth, and a kernel
/// larger than 1 x 1. Per stride phase, the product's columns are the input channels alone, 3 of
/// a 16- or 32-column panel: ResNet-18's stem ran its input gradient at 9 GFLOP/s so, 5x slower
/// than its weight gradient.
inline bool conv_input_gradient_by_taps(const ConvGeometry& geo) {
  return geo.in_per_group() < kPatchCopyChannels && geo.out_per_group() >= kPatchCopyChannels && geo.taps() > 1;
}

/// dx = the input gradient of conv(x, w) for dy by taps, for conv_input_gradient_by_taps:
///   z_g((t, c), p) = sum over o of w[g og + o, c, t] dy[p, g og + o]
/// a GEMM of rows = the group's input channels x taps (s = t cg + c), k = its output channels,
/// columns = the output positions p = (n, i, j), whose rows of dy are runs of positions (NCHW);
/// then each row of dx adds its taps' rows of z, shifted:
///   dx[n, g cg + c, h, w] = sum over taps (kh, kw) reaching it of z_g((t, c), (n, i, j)),
///   h = i stride_h - pad_h + kh dilation_h, w = j stride_w - pad_w + kw dilation_w.
/// z holds the kernel's block sums (bfloat16: float, rounded once as dx is written). Slabs of
/// images whose dy is about 1 MiB (the GEMM's packed dy then stays in L2: ResNet-18's stem at
/// batch 64, its 16 MB of dy packed at once, ran 1.5-2x slower) and whose z fits conv_slab_bytes.
/// ResNet-18's stem: 24.8 -> 2.6 ms in float, against 9 GFLOP/s per stride phase.
template <class T>
void conv2d_backward_input_by_taps(const ConvGeometry& geo, const Strided4<const T>& dy, const T* w,
                                   const Strided4<T>& dx) {
  using K = ConvKernel<T>;
  using B = typename K::Elem;
  using Packed = typename K::Packed;
  const std::int64_t cg = geo.in_per_group(), og = geo.out_per_group(), taps = geo.taps(), m = cg * taps;
  const std::int64_t plane = geo.out_h * geo.out_w;
  const std::int64_t slab = std::clamp<std::int64_t>(
      std::min(conv_slab_bytes.load(std::memory_order_relaxed) / (plane * geo.groups * m * std::int64_t(sizeof(B))),
               (std::int64_t(1) << 20) / (plane * og * std::int64_t(sizeof(T)))),
      1, geo.batch);
  HostVector<B> z(std::size_t(std::min(slab, geo.batch) * plane * geo.groups * m));
  // A_g(s = (t, c), o) = w[g og + o, c, tap t]: every group's m x og, row-major, back to back
  std::vector<T> a(static_cast<std::size_t>(geo.groups * m * og));
  for (std::int64_t g = 0; g < geo.groups; ++g)
    for (std::int64_t o = 0; o < og; ++o)
      for (std::int64_t c = 0; c < cg; ++c)
        for (std::int64_t t = 0; t < taps; ++t)
          a[(g * m + t * cg + c) * og + o] = w[((g * og + o) * cg + c) * taps + t];
  for (std::int64_t n0 = 0; n0 < geo.batch; n0 += slab) {
    const std::int64_t images = std::min(slab, geo.batch - n0), positions = images * plane;
    for (std::int64_t g = 0; g < geo.groups; ++g) {
      auto pack_a = [&](std::int64_t i0, std::int64_t steps, Packed* dst) {
        pack_rows_panel<K>(a.data() + g * m * og, og, m, og, i0, steps, dst);
      };
      // B(o, p) = dy[n0 + n, g og + o, i, j] for the panel's positions p = (n, i, j): runs along
      // rows of dy, written k-major into an FMA panel, or row-major for the other kernels' packers
      thread_local std::vector<T> staged;
      auto pack_b = [&](std::int64_t j0, std::int64_t steps, Packed* dst) {
        T* rows;
        if constexpr (is_fma_kernel_v<K>) rows = dst;
        else staged.resize(std::size_t(og * K::kCols)), rows = staged.data();
        const std::int64_t cols = std::min(K::kCols, positions - j0);
        for (std::int64_t o = 0; o < og; ++o) {
          const T* channel = dy.data + n0 * dy.sn + (g * og + o) * dy.sc;
          T* d = rows + o * K::kCols;
          for (std::int64_t p = j0, done = 0; done < cols;) {
            const std::int64_t n = p / plane, i = p % plane / geo.out_w, j = p % geo.out_w;
            const std::int64_t run = std::min(cols - done, geo.out_w - j);
            const T* from = channel + n * dy.sn + i * dy.sh + j * dy.sw;
            if (dy.sw == 1) std::copy(from, from + run, d + done);
            else for (std::int64_t e = 0; e < run; ++e) d[done + e] = from[e * dy.sw];
            done += run, p += run;
          }
          std::fill(d + cols, d + K::kCols, T(0));
        }
        if constexpr (!is_fma_kernel_v<K>) pack_columns_panel<K>(rows, K::kCols, og, K::kCols, 0, steps, dst);
      };
      gemm_packed<K>(pack_a, pack_b, m, og, positions, threads_for(positions * og * m / 64),
                     GemmStore<B>{z.data() + g * m * positions, positions});
    }
    // a task per row of dx (n, channel, h): the sum of its taps' shifted rows of z
    const std::int64_t rows = images * geo.in_channels * geo.in_h;
    const int threads = threads_for(rows * geo.in_w * taps);
    WEFT_PRAGMA_OMP(omp parallel num_threads(threads) if (threads > 1))
    {
      std::vector<B> acc(static_cast<std::size_t>(geo.in_w));
      WEFT_PRAGMA_OMP(omp for schedule(static))
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t n = r / (geo.in_channels * geo.in_h), gc = r / geo.in_h % geo.in_channels;
        const std::int64_t h = r % geo.in_h, g = gc / cg, c = gc % cg;
        std::fill(acc.begin(), acc.end(), B(0));
        for (std::int64_t kh = 0; kh < geo.kernel_h; ++kh) {
          const std::int64_t ih = h + geo.pad_h - kh * geo.dilation_h;
          if (ih < 0 || ih % geo.stride_h != 0 || ih / geo.stride_h >= geo.out_h) continue;
          for (std::int64_t kw = 0; kw < geo.kernel_w; ++kw) {
            const std::int64_t s = (kh * geo.kernel_w + kw) * cg + c, shift = kw * geo.dilation_w - geo.pad_w;
            const B* src = z.data() + (g * m + s) * positions + (n * geo.out_h + ih / geo.stride_h) * geo.out_w;
            // output columns j with 0 <= j stride_w + shift < in_w
            const std::int64_t j_begin = shift >= 0 ? 0 : (-shift + geo.stride_w - 1) / geo.stride_w;
            const std::int64_t j_end = std::min(geo.out_w, (geo.in_w - shift + geo.stride_w - 1) / geo.stride_w);
            B* to = acc.data();
            if (geo.stride_w == 1)
              for (std::int64_t j = j_begin; j < j_end; ++j) to[j + shift] += src[j];
            else
              for (std::int64_t j = j_begin; j < j_end; ++j) to[j * geo.stride_w + shift] += src[j];
          }
        }
        T* out = dx.data + (n0 + n) * dx.sn + gc * dx.sc + h * dx.sh;
        for (std::int64_t col = 0; col < geo.in_w; ++col) out[col * dx.sw] = T(acc[col]);
      }
    }
  }
}

/// The input gradient of a 1 x 1 convolution of stride 1 without padding, one group, is the
/// forward of dy under the transposed weight, dx_n(c, p) = sum_o w[o, c] dy_n(o, p): the geometry
/// of that forward (dy's O channels in, C out, over the same positions).
inline ConvGeometry pointwise_input_gradient_geometry(const ConvGeometry& geo) {
  ConvGeometry g;
  g.batch = geo.batch, g.in_channels = geo.out_channels, g.out_channels = geo.in_channels;
  g.in_h = g.out_h = geo.out_h, g.in_w = g.out_w = geo.out_w;
  return g;
}

/// dx = the input gradient of conv(x, w) for dy (any strides; w contiguous [O, C/g, kH, kW]),
/// written into dx (any strides), every element once, on ConvKernel<T>.
template <class T>
void conv2d_backward_input(const ConvGeometry& geo, const Strided4<const T>& dy, const T* w, const Strided4<T>& dx) {
  using K = ConvKernel<T>;
  using B = typename K::Elem;
  const std::int64_t cg = geo.in_per_group(), og = geo.out_per_group(), taps = geo.taps();
  if (geo.groups == 1 && taps == 1 && geo.stride_h == 1 && geo.stride_w == 1 && geo.pad_h == 0 && geo.pad_w == 0) {
    // as a forward by output positions (conv_pointwise_planes): the NCHW product's rows are dx's
    // rows, stored as they are (ResNet-50's batch-1 1 x 1 reduce: dx through transposes ran at
    // about 0.7x libtorch's backward)
    const ConvGeometry transposed = pointwise_input_gradient_geometry(geo);
    if (conv_forward_by_positions<T>(transposed, dy.sh, dy.sw, dx.sc, dx.sw) &&
        conv_pointwise_planes<T>(transposed, dy.sh, dy.sw)) {
      HostVector<T> wt(std::size_t(geo.in_channels * geo.out_channels));
      for (std::int64_t o = 0; o < geo.out_channels; ++o)
        for (std::int64_t c = 0; c < geo.in_channels; ++c) wt[std::size_t(c * geo.out_channels + o)] = w[o * geo.in_channels + c];
      return conv2d_forward_by_positions<T>(transposed, dy, wt.data(), ConvEpilogue<T>{}, dx);
    }
  }
  if (conv_input_gradient_by_taps(geo)) return conv2d_backward_input_by_taps(geo, dy, w, dx);
  if (conv_sampled_input(geo)) {
    fill_strided(dx, geo.batch, geo.in_channels, geo.in_h, geo.in_w, T(0));
    return conv2d_backward_input(sampled_geometry(geo), dy, w, sampled_view(geo, dx));
  }
  // dy's copy in slabs of images (conv_slab_bytes), each slab's product on its own
  const std::int64_t slab =
      conv_slab_images<T>(geo.batch, geo.out_channels, geo.out_h + geo.kernel_h, geo.out_w + geo.kernel_w,
                          patches_channel_runs<T>(dy.sc, og, taps));
  if (slab < geo.batch) {
    for (std::int64_t n0 = 0; n0 < geo.batch; n0 += slab) {
      ConvGeometry part = geo;
      part.batch = std::min(slab, geo.batch - n0);
      conv2d_backward_input(part, images_from(dy, n0), w, images_from(dx, n0));
    }
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    if (conv_winograd<T>(geo, true)) {
      // dx = the correlation of dy, padded by 2 - pad, with the flipped kernels w[o, c, 2 - kh, 2 - kw]
      const HostVector<float> u = winograd_weights(og, cg, [&](std::int64_t c, std::int64_t o, int kh, int kw) {
        return w[(o * cg + c) * 9 + (2 - kh) * 3 + 2 - kw];
      });
      const PatchSource<T> source = winograd_source(dy, geo.batch, og, geo.out_h, geo.out_w, 2 - geo.pad_h,
                                                    2 - geo.pad_w, geo.in_h, geo.in_w);
      const Strided4<const T>& v = source.view();
      winograd_product(v.data, v.sn, v.sh, v.sw, geo.batch, geo.in_h, geo.in_w, og, cg, u.data(), threads_for(geo.macs() / 64),
                       [&](std::int64_t, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1,
                           const float* block, std::int64_t ld) {
                         store_block(dx, geo.in_h, geo.in_w, 1, 1, 0, 0, 0, i0, i1, j0, j1, block, ld, BlockAsIs{});
                       });
      return;
    }
  }
  auto floor_div = [](std::int64_t a, std::int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  // Per stride phase (ph, pw): its rows are the input positions (ph + stride_h a, pw + stride_w b);
  // its taps the kernel positions whose (phase + pad - kh dilation) the stride divides, reading dy
  // at a + that quotient (tap_index: kh kW + kw of each).
  struct Phase {
    std::int64_t ph, pw;
    PatchOperand<T> patches;
    std::vector<std::int64_t> tap_index;
  };
  std::vector<Phase> phases;
  SourcePads pads;
  for (std::int64_t ph = 0; ph < std::min(geo.stride_h, geo.in_h); ++ph)
    for (std::int64_t pw = 0; pw < std::min(geo.stride_w, geo.in_w); ++pw) {
      Phase phase{ph, pw, {}, {}};
      PatchOperand<T>& base = phase.patches;
      base.src = dy;
      base.src_h = geo.out_h, base.src_w = geo.out_w;
      base.batch = geo.batch;
      base.grid_h = (geo.in_h - ph + geo.stride_h - 1) / geo.stride_h;
      base.grid_w = (geo.in_w - pw + geo.stride_w - 1) / geo.stride_w;
      base.channels = og;
      for (std::int64_t kh = 0; kh < geo.kernel_h; ++kh) {
        const std::int64_t rh = ph + geo.pad_h - kh * geo.dilation_h;
        if (rh - floor_div(rh, geo.stride_h) * geo.stride_h != 0) continue;
        for (std::int64_t kw = 0; kw < geo.kernel_w; ++kw) {
          const std::int64_t rw = pw + geo.pad_w - kw * geo.dilation_w;
          if (rw - floor_div(rw, geo.stride_w) * geo.stride_w != 0) continue;
          base.tap_h.push_back(rh / geo.stride_h);
          base.tap_w.push_back(rw / geo.stride_w);
          phase.tap_index.push_back(kh * geo.kernel_w + kw);
        }
      }
      base.reach(pads);
      phases.push_back(std::move(phase));
    }
  // one source for every phase: dy, or its channels-last copy padded for all their windows
  const PatchSource<T> source(dy, geo.batch, geo.out_channels, geo.out_h, geo.out_w, og, geo.taps(), pads);
  const int threads = threads_for(geo.macs() / 64);
  for (Phase& phase : phases) {
    const std::int64_t phase_taps = std::int64_t(phase.tap_index.size()), k = og * phase_taps;
    PatchOperand<T>& base = phase.patches;
    if (k == 0) {  // no tap reaches these inputs (stride > dilated kernel): their gradient is 0
      fill_strided(Strided4<T>{dx.data + phase.ph * dx.sh + phase.pw * dx.sw, dx.sn, dx.sc, dx.sh * geo.stride_h,
                               dx.sw * geo.stride_w},
                   geo.batch, geo.in_channels, base.grid_h, base.grid_w, T(0));
      continue;
    }
    source.rebase(base);
    std::vector<PatchOperand<T>> patches(std::size_t(geo.groups), base);
    for (std::int64_t g = 0; g < geo.groups; ++g) {
      patches[g].channel0 = g * og;
      patches[g].finish();
    }
    // B_g(s = (o, t), c) = w[g og + o, c, tap t] (every group's patches share the column order):
    // output channel o's kernels [cg, taps] transposed, kernel tap q to step step_of[o taps + q]
    const PatchOperand<T>& order = patches[0];
    std::vector<std::int64_t> step_of(static_cast<std::size_t>(og * taps), -1);
    for (std::int64_t s = 0; s < k; ++s)
      step_of[order.column_channel[s] * taps + phase.tap_index[order.column_tap[s]]] = s;
    const HostVector<typename K::Packed> panels =
        pack_group_weights<K, T>(geo.groups, k, cg, [&](std::int64_t g, std::int64_t j0, std::int64_t cols, T* dst,
                                                         std::int64_t ld) {
          for (std::int64_t o = 0; o < og; ++o) {
            const std::int64_t at = ((g * og + o) * cg + j0) * taps;
            fill_transposed_columns(w + at, taps, taps, cols, step_of.data() + o * taps, dst, ld,
                                    geo.out_channels * cg * taps - at);
          }
        });
    auto finish = [&](std::int64_t g, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1, const B* block,
                      std::int64_t ld) {
      store_block(dx, base.grid_h, base.grid_w, geo.stride_h, geo.stride_w, phase.ph, phase.pw, g * cg, i0, i1, j0, j1,
                  block, ld, BlockAsIs{});
    };
    conv_product(patches, k, cg, panels.data(), threads, finish);
  }
}

/// dw = the weight gradient of conv(x, w) for dy (x, dy any strides), into dw contiguous
/// [O, C/g, kH, kW] (overwritten), on ConvKernel<T> (sums in its block type, rounded to T once).
///
/// Two ways to split the work. By positions: tasks of about 1 MiB of packed patches, each a whole
/// og x k product over its positions summed into its thread's copy of dw (the copies added at the
/// end), which every task reads and writes. By output blocks: per group one product over all
/// positions on the threads, each output block summed once (the driver slices the positions) and
/// written into dw as it completes, the packed patches then as large as positions x k (past the
/// driver's kept scratch it works in parts, packing dy again for each). The partial sums decide:
/// where a thread's copy fits the same 1 MiB of cache (ResNet-18's first two stages, 64 x 576 and
/// 128 x 1152), by positions, 10% faster than by blocks at 128 x 1152; larger copies go to memory
/// every task (its last stage: 512 x 4608 sums, 9.4 MB, per task of 56 positions, ran at 0.6x the
/// rate by blocks), so by blocks.
template <class T>
void conv2d_backward_weight(const ConvGeometry& geo, const Strided4<const T>& x, const Strided4<const T>& dy, T* dw) {
  using K = ConvKernel<T>;
  using B = typename K::Elem;
  using Packed = typename K::Packed;
  const std::int64_t og = geo.out_per_group(), k = geo.reduction(), positions = geo.out_positions(), taps = geo.taps();
  const std::int64_t plane = geo.out_h * geo.out_w, cg = geo.in_per_group();
  if (conv_sampled_input(geo)) return conv2d_backward_weight(sampled_geometry(geo), sampled_view(geo, x), dy, dw);
  if constexpr (std::is_same_v<T, float>) {
    // Winograd where the forward runs it and each thread's 16 O C sums fit 1 MiB of cache (ResNet-18's
    // first two stages); x copied padded for the tiles, dy channels-last, in slabs of images
    if (conv_winograd<T>(geo) && cg % BlockGemmTile<T>::kCols == 0 &&
        16 * og * cg * std::int64_t(sizeof(float)) <= (std::int64_t(1) << 20)) {
      const int threads = threads_for(geo.macs() / 64);
      HostVector<float> sums(std::size_t(threads * 16 * og * cg), 0.0f);
      const std::int64_t slab =
          conv_slab_images<T>(geo.batch, geo.in_channels, geo.in_h + 2 * geo.pad_h, geo.in_w + 2 * geo.pad_w, true);
      for (std::int64_t n0 = 0; n0 < geo.batch; n0 += slab) {
        const std::int64_t images = std::min(slab, geo.batch - n0);
        const PatchSource<T> xs = winograd_source(images_from(x, n0), images, cg, geo.in_h, geo.in_w, geo.pad_h,
                                                  geo.pad_w, geo.out_h, geo.out_w);
        const PatchSource<T> dys(images_from(dy, n0), images, og, geo.out_h, geo.out_w, og, taps,
                                 SourcePads{0, geo.out_h % 2, 0, geo.out_w % 2});
        const Strided4<const T>&xv = xs.view(), &dv = dys.view();
        winograd_weight_product(xv.data, xv.sn, xv.sh, xv.sw, dv.data, dv.sn, dv.sh, dv.sw, images, geo.out_h,
                                geo.out_w, cg, og, threads, sums.data());
      }
      winograd_weight_gradient(sums.data(), threads, cg, og, dw);
      return;
    }
  }
  // The direct product where each panel of the patch columns is one run of a channels-last
  // source (a tap's channels, a multiple of the panel's width): nothing packed, dy and x read in
  // place (the GEMM's packing of both was a third of ResNet-18's first-stage weight gradient).
  const bool runs = patches_channel_runs<T>(x.sc, cg, taps);
  bool direct = false;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) direct = runs && cg % BlockGemmTile<T>::kCols == 0;
  std::optional<PatchSource<T>> source;  // the GEMM's: the whole batch's
  std::vector<PatchOperand<T>> patches;
  if (!direct) {
    source.emplace(x, geo.batch, geo.in_channels, geo.in_h, geo.in_w, cg, taps, conv_forward_pads(geo, x));
    for (std::int64_t g = 0; g < geo.groups; ++g) patches.push_back(conv_forward_patches(geo, x, g, &*source));
  }
  int threads = threads_for(geo.macs() / 64);
  // Positions per task: the packed patch panels of a task (positions x k) about 1 MiB, and at
  // least 128 (or the threads' even share): each task also adds its og x k sums into its thread's
  // copy, which against 2 x 128 flops an output stays a small part (ResNet-50's 1024-channel 1 x 1
  // at batch 1, 196 positions: in 8 tasks the adds were a quarter of its float weight gradient).
  const std::int64_t chunk = std::max(conv_rows_per_task<K>(positions, k, geo.groups, threads),
                                      std::min<std::int64_t>(128, (positions + threads - 1) / threads));
  const std::int64_t chunks = (positions + chunk - 1) / chunk;
  // The GEMM over few positions against the output channels (a small batch's deep layers) goes by
  // output blocks whatever the sums' size: split by positions, ResNet-50's 1024-channel 1 x 1 at
  // batch 1 (196 positions, 256 x 1024 sums) zeroed two 1 MiB copies, added a block into them per
  // task and summed them into dw at the end, 3/4 of its bfloat16 weight gradient.
  const bool few_positions = !direct && positions <= 2 * og;
  const bool split_positions = og * k * std::int64_t(sizeof(B)) <= (std::int64_t(1) << 20) && !few_positions;
  const std::int64_t tasks = split_positions ? geo.groups * chunks : geo.groups;
  // Partial sums: a copy per thread where the positions split, added at the end (the GEMM's in
  // the patches' column order, the direct product's in dw's). With one copy, none: the GEMM's
  // blocks, each complete once, and the direct product's sums (T itself) land in dw straight away
  // (ResNet-50's 512-channel 3 x 3 at batch 1: a 9.4 MB float copy zeroed, summed into and
  // reordered on one thread was 3/4 of its bfloat16 weight gradient).
  // By output blocks with few positions, the patch columns in dw's order: each block row lands in
  // dw as one run, rounded a packet at a time, where in the patches' tap-major order it went an
  // element at a time 9 apart (ResNet-50's 512-channel 3 x 3 at batch 1, 49 positions: 57% of its
  // bfloat16 weight gradient; its 256-channel one, 196 positions: 20%). Their packing then reads an
  // element at a time, positions x k, against og x k outputs.
  if (few_positions)
    for (PatchOperand<T>& p : patches) p.order_by_channel();
  const int sums = split_positions ? int(std::min<std::int64_t>(threads, tasks)) : 1;
  const std::int64_t size = geo.out_channels * k;
  const bool in_copies = split_positions && (!direct || sums > 1);
  HostVector<B> partial(std::size_t(in_copies ? sums * size : 0), B(0));
  // dw_column[j]: where the patches' column j, (channel, tap), lies in a row of dw
  std::vector<std::int64_t> dw_column(static_cast<std::size_t>(k));
  bool dw_order = false;  // dw_column[j] = j
  auto set_order = [&](const PatchOperand<T>& order) {
    dw_order = true;
    for (std::int64_t j = 0; j < k; ++j) {
      dw_column[j] = order.column_channel[j] * taps + order.column_tap[j];
      dw_order = dw_order && dw_column[j] == j;
    }
  };
  if (!direct) set_order(patches[0]);
  // The product of group g over positions p0 .. p0 + count - 1 on `threads`; each finished block's
  // row o of group g, columns j0 .. j0 + count - 1, goes to store(g og + o, j0, values, count).
  auto product = [&](std::int64_t g, std::int64_t p0, std::int64_t count, int gemm_threads, const auto& store) {
    const PatchOperand<T>& patch = patches[g];
    // A(o, p) = dy[n, g og + o, i, j] for the positions p: kRows rows of `count`, gathered
    // k-major into an FMA panel, or row-major for the other kernels' packers.
    thread_local std::vector<T> staged;
    auto pack_a = [&](std::int64_t i0, std::int64_t steps, Packed* dst) {
      const std::int64_t live = std::min<std::int64_t>(K::kRows, og - i0);
      T* rows;
      if constexpr (is_fma_kernel_v<K>) rows = dst;
      else staged.resize(std::size_t(K::kRows * count)), rows = staged.data();
      const T* channel0 = dy.data + (g * og + i0) * dy.sc;
      // positions stepped in order (n, i, j), no division per element
      const std::int64_t n0 = p0 / plane, oi0 = (p0 - n0 * plane) / geo.out_w, oj0 = p0 - n0 * plane - oi0 * geo.out_w;
      if constexpr (is_fma_kernel_v<K>) {
        std::int64_t n = n0, oi = oi0, oj = oj0;
        for (std::int64_t p = 0; p < count; ++p) {
          const T* at = channel0 + n * dy.sn + oi * dy.sh + oj * dy.sw;
          for (std::int64_t r = 0; r < K::kRows; ++r) rows[p * K::kRows + r] = r < live ? at[r * dy.sc] : T(0);
          if (++oj == geo.out_w) {
            oj = 0;
            if (++oi == geo.out_h) oi = 0, ++n;
          }
        }
      } else {
        // row-major: each channel's positions by output rows, a copy per row where dy's positions
        // are adjacent (NCHW; an element at a time across the rows was half of ResNet-18's
        // bfloat16 stem weight gradient), a copy per image where its rows are too (a 32 x 32
        // plane's rows copied one by one made its 3 x 3 bfloat16 weight gradient 6% slower)
        const bool planes = dy.sw == 1 && dy.sh == geo.out_w;
        for (std::int64_t r = 0; r < live; ++r) {
          std::int64_t n = n0, oi = oi0, oj = oj0;
          for (std::int64_t p = 0; p < count;) {
            const T* at = channel0 + r * dy.sc + n * dy.sn + oi * dy.sh + oj * dy.sw;
            if (planes) {  // to the plane's end
              const std::int64_t run = std::min(plane - oi * geo.out_w - oj, count - p);
              std::copy(at, at + run, rows + r * count + p);
              p += run, oi = oj = 0, ++n;
              continue;
            }
            const std::int64_t run = std::min(geo.out_w - oj, count - p);
            if (dy.sw == 1) std::copy(at, at + run, rows + r * count + p);
            else
              for (std::int64_t e = 0; e < run; ++e) rows[r * count + p + e] = at[e * dy.sw];
            p += run, oj = 0;
            if (++oi == geo.out_h) oi = 0, ++n;
          }
        }
        pack_rows_panel<K>(rows, count, live, count, 0, steps, dst);
      }
    };
    // B(p, s) = the patch column s at position p0 + p: kCols columns of `count` rows.
    auto pack_b = [&](std::int64_t j0, std::int64_t steps, Packed* dst) {
      if constexpr (is_fma_kernel_v<K>) {
        patch.template pack_columns<K::kCols>(p0, steps, j0, dst);
      } else {
        staged.resize(std::size_t(count * K::kCols));
        patch.template pack_columns<K::kCols>(p0, count, j0, staged.data());
        pack_columns_panel<K>(staged.data(), K::kCols, count, K::kCols, 0, steps, dst);
      }
    };
    auto done = [&](std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1, const B* block, std::int64_t ld) {
      for (std::int64_t i = i0; i < i1; ++i) store(g * og + i, j0, block + (i - i0) * ld, j1 - j0);
    };
    gemm_packed<K>(pack_a, pack_b, og, count, k, gemm_threads, GemmBlockEpilogue<decltype(done)>{done});
  };
  auto weight_gradient_gemm = [&] {
    if (split_positions) {
      WEFT_PRAGMA_OMP(omp parallel for num_threads(sums) schedule(dynamic, 1) if (sums > 1))
      for (std::int64_t task = 0; task < tasks; ++task) {
#if defined(_OPENMP)
        B* sum = partial.data() + omp_get_thread_num() * size;
#else
        B* sum = partial.data();
#endif
        const std::int64_t g = task / chunks, p0 = task % chunks * chunk;
        product(g, p0, std::min(chunk, positions - p0), 1,
                [&](std::int64_t row, std::int64_t j0, const B* __restrict values, std::int64_t count) {
                  B* __restrict out = sum + row * k + j0;
                  for (std::int64_t j = 0; j < count; ++j) out[j] += values[j];
                });
      }
    } else {
      for (std::int64_t g = 0; g < geo.groups; ++g)
        product(g, 0, positions, threads, [&](std::int64_t row, std::int64_t j0, const B* values, std::int64_t count) {
          if (dw_order) store_run(dw + row * k + j0, values, count);
          else
            for (std::int64_t j = 0; j < count; ++j) dw[row * k + dw_column[j0 + j]] = T(values[j]);
        });
    }
  };
  if (direct) {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      // x's copy in slabs of images (conv_slab_bytes), the sums added over them
      std::vector<std::int64_t> x_offset(static_cast<std::size_t>(plane)), dy_offset(static_cast<std::size_t>(plane));
      std::vector<std::uint64_t> position_taps(static_cast<std::size_t>(plane));
      for (std::int64_t q = 0; q < plane; ++q) dy_offset[q] = q / geo.out_w * dy.sh + q % geo.out_w * dy.sw;
      const std::int64_t slab =
          conv_slab_images<T>(geo.batch, geo.in_channels, geo.in_h + 2 * geo.pad_h, geo.in_w + 2 * geo.pad_w, true);
      for (std::int64_t n0 = 0; n0 < geo.batch; n0 += slab) {
        ConvGeometry part = geo;
        part.batch = std::min(slab, geo.batch - n0);
        const Strided4<const T> xs = images_from(x, n0);
        const PatchSource<T> slab_source(xs, part.batch, geo.in_channels, geo.in_h, geo.in_w, cg, taps,
                                         conv_forward_pads(part, xs));
        const PatchOperand<T> order = conv_forward_patches(part, xs, 0, &slab_source);
        set_order(order);
        std::vector<std::uint64_t> row_taps, column_taps;
        order.data_taps(row_taps, column_taps);
        for (std::int64_t q = 0; q < plane; ++q) {
          std::int64_t h0, w0;
          order.row_origin(q, x_offset[q], h0, w0);
          position_taps[q] = row_taps[q / geo.out_w] & column_taps[q % geo.out_w];
        }
        direct_weight_product<T>(geo.groups, og, k, part.batch, x_offset, position_taps, order.src.data, order.src.sn,
                                 cg * order.src.sc, order.column_offset, order.column_tap, dy_offset,
                                 dy.data + n0 * dy.sn, dy.sn, dy.sc, threads, sums, dw_column, n0 == 0,
                                 in_copies ? partial.data() : dw);
      }
    }
  } else {
    weight_gradient_gemm();
  }
  if (!in_copies) return;
  // The copies added into dw, rows on the threads.
  const int add_threads = int(std::min<std::int64_t>(threads_for(sums * size), geo.out_channels));
  WEFT_PRAGMA_OMP(omp parallel for num_threads(add_threads) schedule(static) if (add_threads > 1))
  for (std::int64_t row = 0; row < geo.out_channels; ++row)
    for (std::int64_t j = 0; j < k; ++j) {
      const std::int64_t e = row * k + j;
      B total = partial[e];
      for (int t = 1; t < sums; ++t) total += partial[t * size + e];
      dw[row * k + (direct ? j : dw_column[j])] = T(total);
    }
}

// The convolution engines' entry points for T, declared `extern` in the files of a program that
// links the weft_kernels library (WEFT_LINKED_KERNELS, core/config.hpp), which defines them
// (src/kernels.cpp: WEFT_CONV_INSTANCES(, float)): those files call them rather than compiling
// the engines again (tests/nn/conv_test.cpp, g++ -Og: 43.8 -> 35.2 s of CPU); the register
// blocks that a file's own fused forward calls (direct_tile, GemmFmaKernel::block) are declared
// extern beside their definitions. For float and double: bfloat16's stay in
// the headers (its GEMM follows each file's ISA macros), and so does the forward into an
// expression's epilogue (conv_forward_product with the caller's block function, backend/conv.hpp).
#define WEFT_CONV_INSTANCES(EXTERN, T)                                                                             \
  EXTERN template void conv2d_forward<T>(const ConvGeometry&, const Strided4<const T>&, const T*,                  \
                                         const typename ConvKernel<T>::Packed*, const ConvEpilogue<T>&,            \
                                         const Strided4<T>&);                                                      \
  EXTERN template void conv2d_backward_input<T>(const ConvGeometry&, const Strided4<const T>&, const T*,           \
                                                const Strided4<T>&);                                               \
  EXTERN template void conv2d_backward_weight<T>(const ConvGeometry&, const Strided4<const T>&,                    \
                                                 const Strided4<const T>&, T*);                                    \
  EXTERN template HostVector<typename ConvKernel<T>::Packed> conv_forward_weights<T>(                              \
      const ConvGeometry&, const PatchOperand<T>&, const T*);
#if WEFT_LINKED_KERNELS
WEFT_CONV_INSTANCES(extern, float)
WEFT_CONV_INSTANCES(extern, double)
#endif

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)

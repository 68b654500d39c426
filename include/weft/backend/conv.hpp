// SPDX-License-Identifier: MIT
/// @file Convolutions handed to the kernels of the data's device: the CPU's direct products and implicit GEMMs (cpu/conv.hpp) for float and double (and bfloat16 where a native bfloat16 GEMM is built), whole or as finished blocks for an expression's epilogue (ConvBlocks); other devices fail with the fix.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "weft/backend/cpu/conv.hpp"
#include "weft/backend/result_block.hpp"
#include "weft/core/tensor.hpp"
#include "weft/plan/conv_geometry.hpp"
#include "weft/plan/kernel_operands.hpp"

namespace weft::detail {
inline namespace WEFT_BACKEND_ABI {

/// Fails unless `device` is the CPU: the convolutions have no CUDA kernels yet.
inline void require_cpu_conv(const char* op, Device device) {
  if (!device.is_cpu())
    fail(op, "runs on the CPU only so far; got a tensor on ", device, ": copy it with .to(Device::cpu()) first");
}

/// A 4-D view as the kernels read it (any strides: NCHW, channels-last, sliced).
template <class T, class U>
cpu::Strided4<T> strided4(const TensorView<U>& v) {
  const Strides& s = v.strides();
  return cpu::Strided4<T>{v.data(), s[0], s[1], s[2], s[3]};
}

#if !defined(__CUDA_ARCH__)
/// The elements of a convolution's packed weight panels in T (cpu::ConvKernel's).
template <class T>
using conv_packed_t = typename cpu::ConvKernel<T>::Packed;
#else
template <class T>
using conv_packed_t = T;  // nvcc's device pass runs no CPU kernel
#endif

/// Whether this build can run convolutions with T operands (cpu::conv_native_built_v).
template <class T>
inline constexpr bool conv_native_built_v =
#if !defined(__CUDA_ARCH__)
    cpu::conv_native_built_v<T>;
#else
    !is_16bit_float_v<T>;
#endif

/// Whether convolutions in T run with T operands (cpu::conv_native: float, double, and bfloat16
/// where a native bfloat16 GEMM is built and permitted); otherwise the caller computes in float.
template <class T>
bool conv_native() {
#if !defined(__CUDA_ARCH__)
  return cpu::conv_native<T>();
#else
  return !is_16bit_float_v<T>;
#endif
}

/// The bfloat16 GEMM a native bfloat16 convolution runs on, for logs (cpu::bf16_gemm_path).
inline const char* conv_bf16_path() {
#if !defined(__CUDA_ARCH__)
  return cpu::bf16_gemm_path();
#else
  return "none";
#endif
}

/// The prepacked forward weights of a convolution (the GEMM's panels, per group) for inputs with
/// x's strides (the panels' column order follows the input's layout), followed by the transformed
/// weight where the convolution may run as Winograd's F(2x2, 3x3) (cpu::conv_winograd_shape).
template <class T>
std::vector<conv_packed_t<T>> conv2d_prepack(const ConvGeometry& geo, const cpu::Strided4<const T>& x,
                                             const TensorView<const T>& w) {
#if !defined(__CUDA_ARCH__)
  const auto panels = cpu::conv_forward_weights(geo, cpu::conv_forward_patches(geo, x, 0), w.data());
  std::vector<conv_packed_t<T>> kept(panels.begin(), panels.end());  // kept by the module
  if constexpr (std::is_same_v<T, float>) {
    if (cpu::conv_winograd_shape<T>(geo)) {  // and Winograd's, for the calls with enough tiles
      const auto u = cpu::winograd_forward_weights(geo, w.data());
      kept.insert(kept.end(), u.begin(), u.end());
    }
  }
  return kept;
#else
  (void)geo, (void)x, (void)w;
  return {};
#endif
}

/// out = conv(x, w) (w contiguous [O, C/g, kH, kW]; or its panels, `prepacked`) followed by the
/// epilogue (bias, relu, residual: cpu::ConvEpilogue), any layouts of x and out; T with
/// conv_native<T>().
template <class T>
void conv2d_forward(const ConvGeometry& geo, const TensorView<const T>& x, const TensorView<const T>& w,
                    const conv_packed_t<T>* prepacked, const cpu::ConvEpilogue<T>& epilogue, const TensorView<T>& out) {
#if !defined(__CUDA_ARCH__)
  cpu::conv2d_forward(geo, strided4<const T>(x), w.data(), prepacked, epilogue, strided4<T>(out));
#else
  (void)geo, (void)x, (void)w, (void)prepacked, (void)epilogue, (void)out;
#endif
}

/// dx = the input gradient of conv(., w) for dy.
template <class T>
void conv2d_backward_input(const ConvGeometry& geo, const TensorView<const T>& dy, const TensorView<const T>& w,
                           const TensorView<T>& dx) {
#if !defined(__CUDA_ARCH__)
  cpu::conv2d_backward_input(geo, strided4<const T>(dy), w.data(), strided4<T>(dx));
#else
  (void)geo, (void)dy, (void)w, (void)dx;
#endif
}

/// dw (contiguous [O, C/g, kH, kW]) = the weight gradient of conv(x, .) for dy.
template <class T>
void conv2d_backward_weight(const ConvGeometry& geo, const TensorView<const T>& x, const TensorView<const T>& dy,
                            const TensorView<T>& dw) {
#if !defined(__CUDA_ARCH__)
  cpu::conv2d_backward_weight(geo, strided4<const T>(x), strided4<const T>(dy), dw.data());
#else
  (void)geo, (void)x, (void)dy, (void)dw;
#endif
}

/// A convolution on the CPU whose product hands out finished blocks: the epilogue path of
/// backend/dense_statements.hpp (`relu(nn::conv2d(x, w) + b) + r` in one pass), float and double.
/// The product's rows are the output positions (n, i, j) of the whole batch and its columns a group's
/// output channels, so a block is a run of positions times a run of channels: within one image a
/// box of the result seen as [N, O, H' W'] (block_shape), a block that crosses images one box per
/// image. The boxes handed out are staged copies of several GEMM blocks (acc + bias[o]: see run).
template <class T>
struct ConvBlocks {
  ConvGeometry geo;
  TensorView<const T> x, w, bias;  // w contiguous [O, C/g, kH, kW]; bias contiguous [O] or empty

  Shape shape() const { return {geo.batch, geo.out_channels, geo.out_h, geo.out_w}; }
  Shape block_shape() const { return {geo.batch, geo.out_channels, geo.out_h * geo.out_w}; }
  /// Whether the convolution reads bytes of `range` (then it cannot write them while it runs).
  bool reads(const ByteRange& range) const {
    for (const TensorView<const T>* v : {&x, &w, &bias})
      if (v->defined() && overlaps(byte_range(tensor_ref(*v)), range)) return true;
    return false;
  }
  std::string describe() const {
    return cat("convolution ", geo.groups > 1 ? cat(geo.groups, " groups x ") : std::string(), geo.out_positions(),
               " x ", geo.reduction(), " x ", geo.out_per_group(), " (", cpu::gemm_fma_isa(), " FMA), ",
               cpu::conv_patches_text<T>(geo, x.strides()[1]), bias.defined() ? ", + bias" : "");
  }
  /// f(ResultBlock) for every finished block of the convolution (+ bias), from any thread.
  /// `destination`: the destination's strides in the block shape; where its positions are nearer
  /// than its channels (NCHW), blocks are handed out transposed, positions innermost, as the kernel
  /// that reads them walks the destination (the GEMM's blocks have channels innermost: read across
  /// them, each element would be a gather).
  template <class F>
  void run(const F& f, const Strides& destination) const {
#if !defined(__CUDA_ARCH__)
    const std::int64_t m = geo.out_per_group(), plane = geo.out_h * geo.out_w;
    const bool positions_inner = std::abs(destination[2]) < std::abs(destination[1]);
    // The GEMM finishes a few register rows at a time (16 x 64 on AVX-512, its row blocks sized
    // for load balance), and a pointwise statement per such block cost more to plan than to run
    // (2.3 ms over a 14 ms ResNet layer). So each thread copies the rows it finishes, in order,
    // into a staging block of up to kStageRows positions (transposed for a destination whose
    // positions are innermost, the bias added) and hands that out when it is full or the next
    // rows do not continue it; what is left, after the GEMM.
    constexpr std::int64_t kStageRows = 256;
    struct Stage {
      std::int64_t g = 0, i0 = 0, i1 = 0, j0 = 0, j1 = 0;
      std::vector<T> values;
    };
    std::mutex stages_lock;
    // per thread, one per column run; keyed by the thread's id, not its OpenMP number: the GEMM
    // calls finish from inside its own (nested, one-thread) region, where every thread is number 0
    std::map<std::thread::id, std::vector<Stage>> stages;
    auto hand_out = [&](Stage& st) {
      const std::int64_t cols = st.j1 - st.j0;
      const std::int64_t row_step = positions_inner ? 1 : cols, col_step = positions_inner ? kStageRows : 1;
      for (std::int64_t n = st.i0 / plane; n * plane < st.i1; ++n) {  // one box per image the rows cover
        const std::int64_t p0 = std::max(st.i0, n * plane) - n * plane;
        const std::int64_t p1 = std::min(st.i1, (n + 1) * plane) - n * plane;
        f(ResultBlock<T>{st.values.data() + (n * plane + p0 - st.i0) * row_step, Shape{n, st.g * m + st.j0, p0},
                         Shape{1, cols, p1 - p0}, Strides{0, col_step, row_step}});
      }
      st.i0 = st.i1;
    };
    auto finish = [&](std::int64_t g, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1,
                      const T* block, std::int64_t ld) {
      std::vector<Stage>* mine;
      {
        const std::lock_guard<std::mutex> hold(stages_lock);
        mine = &stages[std::this_thread::get_id()];
      }
      auto st = std::find_if(mine->begin(), mine->end(), [&](const Stage& s) { return s.g == g && s.j0 == j0; });
      if (st == mine->end()) st = mine->insert(mine->end(), Stage{g, i0, i0, j0, j1, {}});
      if (st->i1 > st->i0 && (st->i1 != i0 || st->j1 != j1 || i1 - st->i0 > kStageRows)) hand_out(*st);
      if (st->i1 == st->i0) st->i0 = st->i1 = i0, st->j1 = j1, st->values.resize(std::size_t(kStageRows * (j1 - j0)));
      const std::int64_t cols = j1 - j0;
      const std::int64_t row_step = positions_inner ? 1 : cols, col_step = positions_inner ? kStageRows : 1;
      T* to = st->values.data() + (i0 - st->i0) * row_step;
      for (std::int64_t j = 0; j < cols; ++j) {
        const T add = bias.defined() ? bias.data()[g * m + j0 + j] : T(0);
        for (std::int64_t i = 0; i < i1 - i0; ++i) to[i * row_step + j * col_step] = block[i * ld + j] + add;
      }
      st->i1 = i1;
    };
    cpu::conv_forward_product(geo, strided4<const T>(x), w.data(), nullptr, finish);
    for (auto& [thread, list] : stages)
      for (Stage& st : list)
        if (st.i1 > st.i0) hand_out(st);
#else
    (void)f;
#endif
  }
};

/// conv(x, w) + bias (checked geometry; x any strides, w contiguous, bias contiguous [O] or empty)
/// as finished blocks for an epilogue: the CPU, float and double. Empty elsewhere (the
/// convolution then runs first and the expression after it).
template <class T>
std::optional<ConvBlocks<T>> conv2d_epilogue_blocks(const ConvGeometry& geo, const TensorView<const T>& x,
                                                    const TensorView<const T>& w, const TensorView<const T>& bias) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (x.device().is_cpu()) return ConvBlocks<T>{geo, x, w, bias};
  }
  return std::nullopt;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail

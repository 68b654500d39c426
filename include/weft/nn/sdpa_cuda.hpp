// SPDX-License-Identifier: MIT
/// @file Attention on CUDA tensors: the checks and refusals (plain C++), and under nvcc the FlashAttention-2 forward launch with its head-dim dispatch.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "weft/backend/cuda/flash_plan.hpp"
#include "weft/log/log.hpp"
#include "weft/nn/sdpa_backend.hpp"
#include "weft/nn/sdpa_options.hpp"
#include "weft/nn/sdpa_problem.hpp"

#if defined(__CUDACC__)
#include "weft/backend/cuda/flash_forward.cuh"
#endif

/// The head dims this translation unit compiles the CUDA flash kernel for (each costs compile
/// time: two dtypes x every SM target). Define it the same way in every file of a program.
#if !defined(WEFT_CUDA_FLASH_HEAD_DIMS)
#define WEFT_CUDA_FLASH_HEAD_DIMS 32, 64, 96, 128, 256
#endif

namespace weft::nn::detail {

/// What decides whether the CUDA flash kernel can run a call.
struct FlashCudaRequest {
  std::string dtype;
  bool is_16bit = false;
  std::int64_t E = 0, Ev = 0;
  bool has_mask = false;
  double dropout_p = 0;
  bool flash_allowed = true;
  std::vector<int> head_dims;  // compiled in this translation unit
};

/// Empty when the flash kernel runs the request, else why not and what is supported. There is no
/// CUDA math backend yet, so a refusal is an error, never a silent fallback.
inline std::string flash_cuda_refusal(const FlashCudaRequest& r) {
  using weft::detail::cat;
  auto dims = [&] {
    std::string s;
    for (int e : r.head_dims) s += (s.empty() ? "" : ", ") + std::to_string(e);
    return s;
  };
  if (!r.flash_allowed)
    return "a SdpaBackendGuard excludes SdpaBackend::flash, the only attention backend on CUDA (no CUDA math "
           "backend yet); allow flash, or move the tensors to the CPU";
  if (r.has_mask)
    return "attn_mask: the CUDA flash kernel has no masks yet (is_causal is supported); run on the CPU";
  if (r.dropout_p > 0) return "dropout_p > 0: the CUDA flash kernel has no dropout yet; run on the CPU";
  if (!r.is_16bit)
    return cat(r.dtype, " inputs: the CUDA flash kernel takes float16 and bfloat16 (tensor cores); cast with "
                        "weft::eval(weft::cast<weft::bfloat16>(x)), or run on the CPU");
  if (r.E != r.Ev)
    return cat("head dims E = ", r.E, " != Ev = ", r.Ev, ": the CUDA flash kernel needs Ev = E");
  bool compiled = false;
  for (int e : r.head_dims) compiled = compiled || e == r.E;
  if (!compiled)
    return cat("head dim ", r.E, ": the CUDA flash kernel supports ", dims(),
               weft::detail::cuda::is_flash_head_dim(r.E)
                   ? " in this translation unit (WEFT_CUDA_FLASH_HEAD_DIMS); add it there"
                   : cat("; pad E to one of them (zero columns of q and k change nothing; crop out's extra "
                         "columns), or run on the CPU"));
  return {};
}

/// Strides (elements) of an operand (batch..., heads, rows, cols) as the flash kernel reads it: the
/// batch dims merged into one stride, or `ok` false when they cannot be.
struct FlashStrides {
  std::int64_t batch = 0, head = 0, row = 0;
  bool ok = true;
};

inline FlashStrides flash_strides(const Shape& shape, const Strides& strides) {
  const int r = shape.rank();
  FlashStrides f;
  f.row = strides[r - 2];
  if (r >= 3) f.head = strides[r - 3];
  // Batch dims (all before the heads), innermost first: each non-trivial one must step by the
  // stride of the previous one times the extents in between.
  std::int64_t expect = -1;
  for (int d = r - 4; d >= 0; --d) {
    if (shape[d] == 1) continue;
    if (expect < 0) f.batch = strides[d];
    else if (strides[d] != expect) f.ok = false;
    expect = strides[d] * shape[d];
  }
  return f;
}

inline namespace WEFT_BACKEND_ABI {

/// sdpa_forward on CUDA tensors: (out, lse), both on q's device.
template <class T>
std::pair<Tensor<T>, Tensor<double>> sdpa_forward_cuda(const TensorView<const T>& q, const TensorView<const T>& k, const TensorView<const T>& v,
                                                      const SdpaOptions& o);

#if !defined(__CUDACC__)

template <class T>
std::pair<Tensor<T>, Tensor<double>> sdpa_forward_cuda(const TensorView<const T>&, const TensorView<const T>&, const TensorView<const T>&,
                                                      const SdpaOptions&) {
  weft::detail::fail_no_cuda("nn::sdpa_forward");
}

#else

/// Runs the flash forward kernel into out (batch..., Hq, L, E) and lse (batch..., Hq, L), both
/// contiguous on q's device; `s` is the checked shape, the request already accepted.
template <class T>
void flash_forward_cuda_into(const TensorView<const T>& q, const TensorView<const T>& k, const TensorView<const T>& v, const SdpaShape& s,
                             Tensor<T>& out, Tensor<double>& lse) {
  static_assert(is_16bit_float_v<T>, "the CUDA flash kernel takes float16 and bfloat16");
  namespace wc = weft::detail::cuda;
  const char* op = "nn::sdpa_forward";
  if (s.batches == 0 || s.Hq == 0 || s.L == 0) return;
  if (s.batches > 65535 || s.Hq > 65535)
    fail(op, "the CUDA flash grid takes at most 65535 batches and 65535 heads, got ", s.batches, " and ", s.Hq,
         " for q ", q.shape(), "; split the call");
  wc::FlashForwardParams<T> p;
  auto operand = [&](const TensorView<const T>& t, const char* name, const T*& data, std::int64_t& batch, std::int64_t& head,
                     std::int64_t& row) {
    const FlashStrides f = flash_strides(t.shape(), t.strides());
    // cp.async moves 16 bytes: every row starts 16-byte aligned, columns are contiguous.
    const bool aligned = reinterpret_cast<std::uintptr_t>(t.data()) % 16 == 0 && f.batch % 8 == 0 &&
                         f.head % 8 == 0 && f.row % 8 == 0 && t.strides()[t.dim() - 1] == 1;
    if (!f.ok || !aligned)
      fail(op, name, " (shape ", t.shape(), ", strides ", t.strides(),
           ") needs contiguous 16-byte aligned rows and mergeable batch dims on CUDA; pass ", name,
           ".contiguous()");
    data = t.data(), batch = f.batch, head = f.head, row = f.row;
  };
  operand(q, "q", p.q, p.q_batch, p.q_head, p.q_row);
  operand(k, "k", p.k, p.k_batch, p.k_head, p.k_row);
  operand(v, "v", p.v, p.v_batch, p.v_head, p.v_row);
  p.out = out.data();
  p.lse = lse.data();
  p.L = s.L, p.S = s.S, p.Hq = s.Hq, p.group = s.group;
  p.scale_log2 = float(s.scale * 1.4426950408889634);  // log2(e)
  p.causal = s.causal, p.causal_offset = s.causal_offset;
  weft::detail::CudaDeviceGuard guard(q.device().index());
  bool launched = false;
  [&]<int... Es>(std::integer_sequence<int, Es...>) {
    ((Es == s.E ? (wc::flash_forward_launch<Es>(p, s.batches), launched = true) : false), ...);
  }(std::integer_sequence<int, WEFT_CUDA_FLASH_HEAD_DIMS>{});
  if (!launched) fail(op, "head dim ", s.E, " is not compiled in (WEFT_CUDA_FLASH_HEAD_DIMS)");
}

template <class T>
std::pair<Tensor<T>, Tensor<double>> sdpa_forward_cuda(const TensorView<const T>& q, const TensorView<const T>& k, const TensorView<const T>& v,
                                                      const SdpaOptions& o) {
  const char* op = "nn::sdpa_forward";
  for (const TensorView<const T>* t : {&q, &k, &v}) {
    if (!t->defined()) fail(op, "an operand is an empty (default-constructed) tensor");
    if (t->device() != q.device())
      fail(op, "q is on ", q.device(), " but an operand of shape ", t->shape(), " is on ", t->device(),
           "; move q, k and v to one device");
  }
  auto refuse = [&](const std::string& why) {
    if (log_enabled(LogComponent::sdpa)) log_write(LogComponent::sdpa, weft::detail::cat(op, ": flash refused: ", why));
    fail(op, "q ", q.shape(), ", k ", k.shape(), ", v ", v.shape(), " on ", q.device(), ": ", why);
  };
  FlashCudaRequest req{std::string(dtype_name<T>()), is_16bit_float_v<T>, 0, 0, o.attn_mask.has_value(),
                       o.dropout_p, backend_allowed(SdpaBackend::flash), {WEFT_CUDA_FLASH_HEAD_DIMS}};
  if (req.has_mask) refuse(flash_cuda_refusal(req));  // before sdpa_shape's CPU-only mask check
  const SdpaShape s = sdpa_shape(op, q.shape(), k.shape(), v.shape(), o);
  req.E = s.E, req.Ev = s.Ev;
  if (const std::string why = flash_cuda_refusal(req); !why.empty()) refuse(why);
  std::pair<Tensor<T>, Tensor<double>> r{empty<T>(s.out_shape(), q.device()),
                                         empty<double>(s.lse_shape(), q.device())};
  if constexpr (is_16bit_float_v<T>) flash_forward_cuda_into(q, k, v, s, r.first, r.second);  // else refused above
  if (log_enabled(LogComponent::sdpa)) {
    const bool lower = o.causal_variant == CausalVariant::lower_right;
    log_write(LogComponent::sdpa,
              weft::detail::cat(op, ": flash backend (", q.device(), ", ", dtype_name<T>(), ", q ", q.shape(), ", k ",
                                k.shape(), ", v ", v.shape(), s.causal ? (lower ? ", causal lower_right" : ", causal")
                                                                       : "",
                                s.group > 1 ? ", gqa" : "", "; FlashAttention-2 sm80 mma, head dim ", s.E, ")"));
  }
  return r;
}

#endif

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn::detail

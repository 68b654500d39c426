// SPDX-License-Identifier: MIT
/// @file FlashAttention-2 handed to the kernels of the data's device, and on the CPU to the block products of the build's ISA: the one place attention chooses a kernel (nn/sdpa.hpp checks the call and picks the backend, flash or math).
///
/// CPU: the fp32 kernels (backend/cpu/attention/flash.hpp) for float and double, and for
/// bfloat16 the same algorithm with its block products on AMX-BF16 tiles (flash_amx.hpp, no
/// dropout, where the OS permits tiles), on AVX512-BF16 vdpbf16ps (flash_dpbf16.hpp, builds
/// without AMX) or on Arm BFMMLA (flash_bfmmla.hpp); half converts to fp32. CUDA: the
/// FlashAttention-2 forward on tensor cores (backend/cuda/attention/flash_forward.cuh), float16 and
/// bfloat16, for the head dims this translation unit compiles.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "weft/backend/attention/dropout.hpp"
#include "weft/backend/attention/problem.hpp"
#include "weft/backend/cpu/attention/flash.hpp"
#include "weft/backend/cpu/attention/flash_amx.hpp"
#include "weft/backend/cpu/attention/flash_bfmmla.hpp"
#include "weft/backend/cpu/attention/flash_dpbf16.hpp"
#include "weft/backend/cuda/attention/flash_plan.hpp"

#if defined(__CUDACC__)
#include "weft/backend/cuda/attention/flash_forward.cuh"
#include "weft/core/cuda_device.hpp"
#endif

/// The head dims this translation unit compiles the CUDA flash kernel for (each costs compile
/// time: two dtypes x every SM target). Define it the same way in every file of a program.
#if !defined(WEFT_CUDA_FLASH_HEAD_DIMS)
#define WEFT_CUDA_FLASH_HEAD_DIMS 32, 64, 96, 128, 256
#endif

namespace weft::detail {

/// The head dims WEFT_CUDA_FLASH_HEAD_DIMS names.
inline std::vector<int> cuda_flash_head_dims() { return {WEFT_CUDA_FLASH_HEAD_DIMS}; }

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
               cuda::is_flash_head_dim(r.E)
                   ? " in this translation unit (WEFT_CUDA_FLASH_HEAD_DIMS); add it there"
                   : cat("; pad E to one of them (zero columns of q and k change nothing; crop out's extra "
                         "columns), or run on the CPU"));
  return {};
}

/// Strides (elements) of an operand (batch..., heads, rows, cols) as the CUDA flash kernel reads
/// it: the batch dims merged into one stride, or `ok` false when they cannot be.
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

/// The block products bfloat16 flash attention runs on the CPU for `s` in this build and
/// process, as the `sdpa` log names them: "amx-bf16 tiles", "avx512-bf16", "neon-bfmmla", or ""
/// (the fp32 kernels: every other dtype, and bfloat16 where none applies).
template <class T>
const char* flash_cpu_products(const SdpaShape& s) {
#if !defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, bfloat16>) {
    if (s.dropout_p == 0 && cpu::flash::flash_amx_available()) return "amx-bf16 tiles";
    if (cpu::flash::flash_dpbf16_available()) return "avx512-bf16";
    if (cpu::flash::flash_bfmmla_available()) return "neon-bfmmla";
  }
#endif
  (void)s;
  return "";
}

#if WEFT_GEMM_DPBF16
namespace native_bf16 = cpu::flash::dpbf16;  // this build's block products on bfloat16 operands (at most one)
#elif WEFT_GEMM_BFMMLA
namespace native_bf16 = cpu::flash::bfmmla;
#endif

#if defined(__CUDACC__)
/// The CUDA flash forward into out (batch..., Hq, L, E) and lse (batch..., Hq, L), contiguous on
/// q's device; `s` is the checked shape, the request already accepted (flash_cuda_refusal).
template <class T>
void flash_forward_cuda(const TensorView<const T>& q, const TensorView<const T>& k, const TensorView<const T>& v,
                        const SdpaShape& s, T* out, double* lse) {
  static_assert(is_16bit_float_v<T>, "the CUDA flash kernel takes float16 and bfloat16");
  const char* op = "nn::sdpa_forward";
  if (s.batches == 0 || s.Hq == 0 || s.L == 0) return;
  if (s.batches > 65535 || s.Hq > 65535)
    fail(op, "the CUDA flash grid takes at most 65535 batches and 65535 heads, got ", s.batches, " and ", s.Hq,
         " for q ", q.shape(), "; split the call");
  cuda::FlashForwardParams<T> p;
  auto operand = [&](const TensorView<const T>& t, const char* name, const T*& data, std::int64_t& batch,
                     std::int64_t& head, std::int64_t& row) {
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
  p.out = out;
  p.lse = lse;
  p.L = s.L, p.S = s.S, p.Hq = s.Hq, p.group = s.group;
  p.scale_log2 = float(s.scale * 1.4426950408889634);  // log2(e)
  p.causal = s.causal, p.causal_offset = s.causal_offset;
  CudaDeviceGuard guard(q.device().index());
  bool launched = false;
  [&]<int... Es>(std::integer_sequence<int, Es...>) {
    ((Es == s.E ? (cuda::flash_forward_launch<Es>(p, s.batches), launched = true) : false), ...);
  }(std::integer_sequence<int, WEFT_CUDA_FLASH_HEAD_DIMS>{});
  if (!launched) fail(op, "head dim ", s.E, " is not compiled in (WEFT_CUDA_FLASH_HEAD_DIMS)");
}
#endif

/// Attention's forward pass for `s` (checked) on q's device: out (batch..., Hq, L, Ev) and lse
/// (batch..., Hq, L) into contiguous buffers there. `bias` holds the mask as additive scores
/// (data null without one; the CPU only: CUDA refuses masks first, flash_cuda_refusal).
template <class T>
void run_flash_forward(const SdpaShape& s, const TensorView<const T>& q, const TensorView<const T>& k,
                       const TensorView<const T>& v, const SdpaRows<math_t<T>>& bias, T* out, double* lse) {
  if (q.device().is_cpu()) {
#if !defined(__CUDA_ARCH__)
    const SdpaRows<T> qr(q), kr(k), vr(v);
    const cpu::flash::FlashProblem<T> problem{s, qr, kr, vr, bias};
    if constexpr (std::is_same_v<T, bfloat16>) {
#if WEFT_FLASH_AMX
      if (s.dropout_p == 0 && cpu::flash::flash_amx_available()) return cpu::flash::flash_forward_amx(problem, out, lse);
#endif
#if WEFT_GEMM_DPBF16 || WEFT_GEMM_BFMMLA
      return cpu::flash::flash_forward_cpu<T, native_bf16::ForwardProducts>(problem, out, lse);
#endif
    }
    cpu::flash::flash_forward_cpu(problem, out, lse);
#endif
  } else {
#if defined(__CUDACC__)
    if constexpr (is_16bit_float_v<T>) flash_forward_cuda(q, k, v, s, out, lse);  // else refused before
#else
    fail_no_cuda("nn::sdpa_forward");
#endif
  }
}

/// Attention's backward pass for `s` (checked) on CPU tensors (the CUDA backward is not written
/// yet: nn/sdpa.hpp refuses CUDA tensors first): dq, dk, dv (shaped like q, k, v) into contiguous
/// buffers, from the forward's out, its lse (contiguous, as sdpa_forward returned it) and dout.
template <class T>
void run_flash_backward(const SdpaShape& s, const TensorView<const T>& q, const TensorView<const T>& k,
                        const TensorView<const T>& v, const SdpaRows<math_t<T>>& bias, const TensorView<const T>& out,
                        const TensorView<const T>& dout, const double* lse, T* dq, T* dk, T* dv) {
#if !defined(__CUDA_ARCH__)
  const SdpaRows<T> qr(q), kr(k), vr(v), outr(out), doutr(dout);
  const cpu::flash::FlashProblem<T> problem{s, qr, kr, vr, bias};
  if constexpr (std::is_same_v<T, bfloat16>) {
#if WEFT_FLASH_AMX
    if (s.dropout_p == 0 && cpu::flash::flash_amx_available())
      return cpu::flash::flash_backward_amx(problem, outr, doutr, lse, dq, dk, dv);
#endif
#if WEFT_GEMM_DPBF16 || WEFT_GEMM_BFMMLA
    return cpu::flash::flash_backward_cpu<T, native_bf16::BackwardProducts>(problem, outr, doutr, lse, dq, dk, dv);
#endif
  }
  cpu::flash::flash_backward_cpu(problem, outr, doutr, lse, dq, dk, dv);
#else
  (void)s, (void)k, (void)v, (void)bias, (void)out, (void)dout, (void)lse, (void)dq, (void)dk, (void)dv;
#endif
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail

// SPDX-License-Identifier: MIT
/// @file Which bfloat16 GEMM CPU matmul runs (bf16_gemm_path: AMX tiles, AVX512-BF16 vdpbf16ps, Arm BFMMLA, or float), and the batched entry to the native one.
#pragma once

#include <cstdint>
#include <utility>

#include "weft/backend/cpu/gemm/amx.hpp"
#include "weft/backend/cpu/gemm/bfmmla.hpp"
#include "weft/backend/cpu/gemm/dpbf16.hpp"
#include "weft/backend/cpu/gemm/packed.hpp"

// 1 where this translation unit has a native bfloat16 GEMM kernel (GemmBf16Kernel).
#define WEFT_GEMM_BF16_NATIVE (WEFT_GEMM_AMX || WEFT_GEMM_DPBF16 || WEFT_GEMM_BFMMLA)

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu {

/// Whether bfloat16 matmul runs a native GEMM (gemm_bf16_batched) in this translation unit and
/// process: AMX where built for it and Linux grants tile data, vdpbf16ps and BFMMLA wherever built
/// for them (vdpbf16ps: builds for AVX512-BF16 without AMX).
inline bool bf16_gemm_native() { return amx_permitted() || kGemmDpbf16 || kGemmBfmmla; }

/// The GEMM bfloat16 matmul runs on the CPU in this translation unit and process: "amx-bf16"
/// (backend/cpu/gemm/amx.hpp), "avx512-bf16" (backend/cpu/gemm/dpbf16.hpp), "neon-bfmmla" (backend/cpu/gemm/bfmmla.hpp) or "float"
/// (cast to float, Eigen's SGEMM, round once; also where an AMX build's process is refused tile
/// data).
inline const char* bf16_gemm_path() {
  if (amx_permitted()) return "amx-bf16";
  if (kGemmDpbf16) return "avx512-bf16";
  return kGemmBfmmla ? "neon-bfmmla" : "float";
}

#if WEFT_GEMM_BF16_NATIVE
/// The native kernel of this build (at most one is built).
#if WEFT_GEMM_AMX
using GemmBf16Kernel = GemmAmxKernel;
#elif WEFT_GEMM_DPBF16
using GemmBf16Kernel = GemmDpbf16Kernel;
#else
using GemmBf16Kernel = GemmBfmmlaKernel;
#endif

/// Kernel K (a bfloat16 one) with its finished blocks as fp32 sums (Elem = float) rather than
/// rounded to bfloat16: for products whose results take more arithmetic before their one rounding
/// (a convolution's bias, relu and residual; the weight gradient's partial sums over threads).
template <class K>
struct GemmFloatBlocks : K {
  using Elem = float;
  static void store(const float* acc, float* c, std::int64_t ldc, std::int64_t i0, std::int64_t j0, std::int64_t n,
                    std::int64_t m) {
    K::template store<float>(acc, c, ldc, i0, j0, n, m);
  }
};

/// The packers of the native kernel for a batch of row-major operands (a[bi] at a + sum_d
/// coord_d a_batch[d], rows lda apart; likewise b): pack_a(bi, i0, steps, dst), pack_b(bi, j0,
/// steps, dst), as gemm_packed_batched and gemm_packed_blocks take them.
inline auto bf16_packers(const weft::bfloat16* a, std::int64_t lda, const Strides& a_batch, const weft::bfloat16* b,
                         std::int64_t ldb, const Strides& b_batch, const Shape& batch, std::int64_t n, std::int64_t k,
                         std::int64_t m) {
  using K = GemmBf16Kernel;
  auto pack_a = [=](std::int64_t bi, std::int64_t i0, std::int64_t steps, K::Packed* dst) {
    std::int64_t oa, ob;
    batch_offsets(bi, batch, a_batch, b_batch, oa, ob);
    K::pack_a(a + oa, lda, n, k, i0, steps, dst);
  };
  auto pack_b = [=](std::int64_t bi, std::int64_t j0, std::int64_t steps, K::Packed* dst) {
    std::int64_t oa, ob;
    batch_offsets(bi, batch, a_batch, b_batch, oa, ob);
    K::pack_b(b + ob, ldb, k, m, j0, steps, dst);
  };
  return std::pair{pack_a, pack_b};
}

/// c[bi] = a[bi] b[bi] on the native kernel (operands as bf16_packers'; c contiguous); needs
/// bf16_gemm_native().
inline void gemm_bf16_batched(const weft::bfloat16* a, std::int64_t lda, const Strides& a_batch,
                              const weft::bfloat16* b, std::int64_t ldb, const Strides& b_batch, weft::bfloat16* c,
                              const Shape& batch, std::int64_t n, std::int64_t k, std::int64_t m) {
  const auto [pack_a, pack_b] = bf16_packers(a, lda, a_batch, b, ldb, b_batch, batch, n, k, m);
  gemm_packed_batched<GemmBf16Kernel>(batch, n, k, m, pack_a, pack_b, c);
}

/// gemm_packed_blocks with the native kernel, operands as gemm_bf16_batched's: the product in
/// finished bfloat16 blocks (each rounded once from its fp32 sums, as gemm_bf16_batched stores
/// them), for an epilogue. Needs bf16_gemm_native().
template <class Finish>
void gemm_bf16_blocks(const weft::bfloat16* a, std::int64_t lda, const Strides& a_batch, const weft::bfloat16* b,
                      std::int64_t ldb, const Strides& b_batch, const Shape& batch, std::int64_t n, std::int64_t k,
                      std::int64_t m, const Finish& finish) {
  const auto [pack_a, pack_b] = bf16_packers(a, lda, a_batch, b, ldb, b_batch, batch, n, k, m);
  gemm_packed_blocks<GemmBf16Kernel>(batch, n, k, m, pack_a, pack_b, finish);
}
#endif

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)

// SPDX-License-Identifier: MIT
/// @file sm_80 tensor-core and copy primitives as inline PTX: cp.async, ldmatrix and mma.sync m16n8k16 with float accumulators (nvcc only).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "weft/core/dtype.hpp"

namespace weft::detail::cuda::sm80 {

/// A shared-memory pointer as the 32-bit address PTX's .shared instructions take.
__device__ __forceinline__ std::uint32_t smem_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

/// Copies 16 bytes global -> shared without passing through registers; when `valid` is false
/// the 16 bytes are zero-filled (src-size 0), which keeps rows past L or S finite.
__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_address(smem)), "l"(gmem),
               "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
/// Waits until at most N committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/// Four 8x8 matrices of 16-bit elements; lane l passes the address of row l % 8 of matrix l / 8,
/// and receives in r[i] row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1 of matrix i.
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const void* smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(smem)));
}
/// As ldmatrix_x4, each matrix transposed: r[i] holds rows 2 (l % 4), 2 (l % 4) + 1, column l / 4.
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(smem)));
}

/// The mma operand type name and float-pair packing of a 16-bit element type.
template <class T>
struct MmaElement;
template <>
struct MmaElement<half> {
  /// Two floats rounded to a packed pair (lo in the low 16 bits).
  __device__ __forceinline__ static std::uint32_t pack(float lo, float hi) {
    const __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const std::uint32_t*>(&h);
  }
};
template <>
struct MmaElement<bfloat16> {
  __device__ __forceinline__ static std::uint32_t pack(float lo, float hi) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const std::uint32_t*>(&h);
  }
};

/// d += a b for a 16x16 tile a (row-major) and a 16x8 tile b (column-major), 16-bit inputs, float
/// accumulators. Lane l (g = l / 4, t = l % 4) holds a[0..3] = a(g, 2t..2t+1), a(g+8, 2t..),
/// a(g, 2t+8..), a(g+8, 2t+8..); b[0..1] = b(2t..2t+1, g), b(2t+8.., g); d[0..3] = d(g, 2t),
/// d(g, 2t+1), d(g+8, 2t), d(g+8, 2t+1).
template <class T>
__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                             std::uint32_t b1) {
  if constexpr (std::is_same_v<T, half>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

}  // namespace weft::detail::cuda::sm80

// SPDX-License-Identifier: MIT
/// @file The FlashAttention-2 forward kernel for sm_80+ (fp16/bf16 in, float accumulation on tensor cores), and its launch for one head dim (nvcc only).
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "weft/backend/cuda/attention/flash_plan.hpp"
#include "weft/backend/cuda/mma_sm80.cuh"
#include "weft/backend/cuda/runtime.cuh"

namespace weft::detail::cuda {

/// One forward call: q (batches, Hq, L, E), k and v (batches, H, S, E), each read through its
/// batch, head and row strides (in elements; the last dim is contiguous and 16-byte aligned);
/// out (batches, Hq, L, E) and lse (batches, Hq, L) contiguous.
template <class T>
struct FlashForwardParams {
  const T* q = nullptr;
  const T* k = nullptr;
  const T* v = nullptr;
  T* out = nullptr;
  double* lse = nullptr;
  std::int64_t q_batch = 0, q_head = 0, q_row = 0;
  std::int64_t k_batch = 0, k_head = 0, k_row = 0;
  std::int64_t v_batch = 0, v_head = 0, v_row = 0;
  std::int64_t L = 0, S = 0, Hq = 1, group = 1;
  float scale_log2 = 0;  // scale * log2(e): scores go to exp2's base in one multiply
  bool causal = false;
  std::int64_t causal_offset = 0;  // query i sees keys j <= i + causal_offset
};

namespace flash {

/// Copies rows [row0, row0 + rows) of a (.., E) operand into a padded smem tile, 16 bytes per
/// thread and step; rows at or past `limit` are zero-filled (finite garbage-free operands: a
/// NaN in V times a zero weight would still be NaN).
template <class Tr, class T>
__device__ __forceinline__ void load_tile(T* smem, const T* g, std::int64_t row_stride, std::int64_t row0,
                                          int rows, std::int64_t limit) {
  for (int c = int(threadIdx.x); c < rows * Tr::kChunksPerRow; c += Tr::kThreads) {
    const int r = c / Tr::kChunksPerRow, chunk = c % Tr::kChunksPerRow;
    const bool valid = row0 + r < limit;
    const T* src = valid ? g + (row0 + r) * row_stride + chunk * 8 : g;
    sm80::cp_async_16(smem + r * Tr::kRowElems + chunk * 8, src, valid);
  }
}

}  // namespace flash

/// out = softmax(q k^T scale) v for one (query block, head, batch) = (blockIdx.x, y, z).
/// Warp w owns rows 16w..16w+15 of the block; lane l (g = l / 4, t = l % 4) holds rows g and g+8
/// of them, so a row's max and sum reduce over the 4 lanes of a quad (two shuffles). Online
/// softmax in base 2: m = max_j s_j (s scaled by scale log2(e)), l = sum_j 2^(s_j - m); a new key
/// block with max m' rescales l and the output accumulator by 2^(m - m') (deferred normalization:
/// out = acc / l once, at the end); lse = (m + log2(l)) ln(2).
template <class Tr, class T>
__global__ void __launch_bounds__(Tr::kThreads) flash_forward_kernel(const FlashForwardParams<T> p) {
  using Element = sm80::MmaElement<T>;
  extern __shared__ __align__(16) unsigned char flash_smem[];
  T* const sq = reinterpret_cast<T*>(flash_smem);
  T* const sk = sq + Tr::kQElems;                     // kStages K tiles
  T* const sv = sk + Tr::kStages * Tr::kKVElems;      // kStages V tiles

  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32, g = lane / 4, t = lane % 4;
  const std::int64_t m0 = std::int64_t(blockIdx.x) * Tr::kBlockM, h = blockIdx.y, b = blockIdx.z;
  const T* const q = p.q + b * p.q_batch + h * p.q_head;
  const T* const k = p.k + b * p.k_batch + (h / p.group) * p.k_head;
  const T* const v = p.v + b * p.v_batch + (h / p.group) * p.v_head;
  const KeyBlockRange blocks = key_block_range(m0, Tr::kBlockM, Tr::kBlockN, p.L, p.S, p.causal, p.causal_offset);

  auto load_kv = [&](std::int64_t block, int stage) {
    flash::load_tile<Tr>(sk + stage * Tr::kKVElems, k, p.k_row, block * Tr::kBlockN, Tr::kBlockN, p.S);
    flash::load_tile<Tr>(sv + stage * Tr::kKVElems, v, p.v_row, block * Tr::kBlockN, Tr::kBlockN, p.S);
  };
  flash::load_tile<Tr>(sq, q, p.q_row, m0, Tr::kBlockM, p.L);
  if (blocks.count > 0) load_kv(0, 0);
  sm80::cp_async_commit();

  float acc[Tr::kNTilesO][4] = {};
  float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0, 0};  // this lane's share of l
  // ldmatrix row addresses: lane l points at row l % 8 of matrix l / 8 (mma_sm80.cuh).
  const int a_row = warp * 16 + lane % 8 + 8 * ((lane / 8) % 2), a_col = 8 * (lane / 16);
  const int k_row = lane % 8 + 8 * (lane / 16), k_col = 8 * ((lane / 8) % 2);
  const int v_row = lane % 8 + 8 * ((lane / 8) % 2), v_col = 8 * (lane / 16);

  for (std::int64_t j = 0; j < blocks.count; ++j) {
    const int stage = int(j % Tr::kStages);
    if (j + 1 < blocks.count) load_kv(j + 1, (stage + 1) % Tr::kStages);
    sm80::cp_async_commit();  // possibly empty: keeps "all but the newest group" = tile j
    sm80::cp_async_wait<1>();
    __syncthreads();
    const T* const kt = sk + stage * Tr::kKVElems;
    const T* const vt = sv + stage * Tr::kKVElems;

    // S = Q K^T for this warp's 16 rows and the block's kBlockN keys.
    float s[Tr::kNTilesS][4] = {};
#pragma unroll
    for (int kk = 0; kk < Tr::kHeadDim / 16; ++kk) {
      std::uint32_t a[4];
      sm80::ldmatrix_x4(a, sq + a_row * Tr::kRowElems + kk * 16 + a_col);
#pragma unroll
      for (int np = 0; np < Tr::kNTilesS / 2; ++np) {
        std::uint32_t bk[4];  // keys 16np..16np+15 as two n8 tiles, e in [16kk, 16kk + 16)
        sm80::ldmatrix_x4(bk, kt + (np * 16 + k_row) * Tr::kRowElems + kk * 16 + k_col);
        sm80::mma_m16n8k16<T>(s[2 * np], a, bk[0], bk[1]);
        sm80::mma_m16n8k16<T>(s[2 * np + 1], a, bk[2], bk[3]);
      }
    }

    // Scale to base 2 and mask: keys past S, and above the causal diagonal.
    const bool masked = j >= blocks.first_masked;
    const std::int64_t n0 = j * Tr::kBlockN;
#pragma unroll
    for (int nt = 0; nt < Tr::kNTilesS; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[nt][e] *= p.scale_log2;
        if (masked) {
          const std::int64_t i = m0 + warp * 16 + g + 8 * (e / 2), key = n0 + nt * 8 + 2 * t + e % 2;
          if (key >= p.S || (p.causal && key > i + p.causal_offset)) s[nt][e] = -INFINITY;
        }
      }

    // Online softmax: new max, rescale l and acc, weights p = 2^(s - m) left in s.
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float m = row_max[r];
#pragma unroll
      for (int nt = 0; nt < Tr::kNTilesS; ++nt) m = fmaxf(m, fmaxf(s[nt][2 * r], s[nt][2 * r + 1]));
      m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 1));
      m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 2));
      // A row that has seen only masked keys keeps m = -inf; subtracting 0 instead keeps
      // 2^(-inf - m) = 0 rather than NaN.
      const float m_use = m == -INFINITY ? 0.f : m;
      const float alpha = exp2f(row_max[r] - m_use);
      row_max[r] = m;
      float sum = 0;
#pragma unroll
      for (int nt = 0; nt < Tr::kNTilesS; ++nt)
#pragma unroll
        for (int c = 2 * r; c < 2 * r + 2; ++c) sum += (s[nt][c] = exp2f(s[nt][c] - m_use));
      row_sum[r] = row_sum[r] * alpha + sum;
#pragma unroll
      for (int nt = 0; nt < Tr::kNTilesO; ++nt) acc[nt][2 * r] *= alpha, acc[nt][2 * r + 1] *= alpha;
    }

    // acc += P V: the accumulator layout of n8 tiles 2kk and 2kk+1 of S is the A layout of one
    // m16k16 tile of P, so P goes from registers to the mma without shared memory.
#pragma unroll
    for (int kk = 0; kk < Tr::kBlockN / 16; ++kk) {
      const std::uint32_t a[4] = {Element::pack(s[2 * kk][0], s[2 * kk][1]), Element::pack(s[2 * kk][2], s[2 * kk][3]),
                                  Element::pack(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                                  Element::pack(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int np = 0; np < Tr::kNTilesO / 2; ++np) {
        std::uint32_t bv[4];  // keys [16kk, 16kk + 16), e in two n8 tiles from 16np
        sm80::ldmatrix_x4_trans(bv, vt + (kk * 16 + v_row) * Tr::kRowElems + np * 16 + v_col);
        sm80::mma_m16n8k16<T>(acc[2 * np], a, bv[0], bv[1]);
        sm80::mma_m16n8k16<T>(acc[2 * np + 1], a, bv[2], bv[3]);
      }
    }
    __syncthreads();  // the next iteration's loads overwrite the stage read here
  }

  // out = acc / l (0 for a row that saw no key), lse = (m + log2 l) ln 2 (+inf there).
  T* const out = p.out + ((b * p.Hq + h) * p.L) * Tr::kHeadDim;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float l = row_sum[r];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    const std::int64_t i = m0 + warp * 16 + g + 8 * r;
    if (i >= p.L) continue;
    const float inv = l > 0 ? 1 / l : 0;
#pragma unroll
    for (int nt = 0; nt < Tr::kNTilesO; ++nt)
      *reinterpret_cast<std::uint32_t*>(out + i * Tr::kHeadDim + nt * 8 + 2 * t) =
          Element::pack(acc[nt][2 * r] * inv, acc[nt][2 * r + 1] * inv);
    if (t == 0)
      p.lse[(b * p.Hq + h) * p.L + i] = l > 0 ? (double(row_max[r]) + std::log2(double(l))) * 0.69314718055994531 : INFINITY;
  }
}

/// Launches the forward kernel for head dim E over batches x Hq x ceil(L / kBlockM) CTAs on the
/// legacy default stream (the caller makes the tensors' device current).
template <int E, class T>
void flash_forward_launch(const FlashForwardParams<T>& p, std::int64_t batches) {
  using Tr = FlashForwardTraits<E>;
  // Needed above 48 KB; cheap, and per device and per thread unlike a cached flag.
  check_cuda(cudaFuncSetAttribute(flash_forward_kernel<Tr, T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  Tr::kSmemBytes),
             "cudaFuncSetAttribute(flash_forward_kernel, MaxDynamicSharedMemorySize)");
  const dim3 grid(unsigned((p.L + Tr::kBlockM - 1) / Tr::kBlockM), unsigned(p.Hq), unsigned(batches));
  flash_forward_kernel<Tr, T><<<grid, Tr::kThreads, Tr::kSmemBytes>>>(p);
  check_cuda(cudaGetLastError(), "flash_forward_kernel launch");
}

}  // namespace weft::detail::cuda

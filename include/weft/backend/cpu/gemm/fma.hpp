// SPDX-License-Identifier: MIT
/// @file The CPU float / double GEMM kernel on FMA packets for gemm_packed, and its batched entry with a fused epilogue per output block (matmul expressions: `gelu(matmul(x, w) + b)` is one pass).
///
/// c = a b with every output sum_k a(i, k) b(k, j) accumulated in T, k in order (one FMA per
/// product, so each partial sum rounds once per step; Eigen's blocked order differs only in the
/// order of the additions: the same bound |error| <= k u sum_k |a b|).
///
/// Layout. The register block is BlockGemmTile<T> (backend/cpu/gemm/block.hpp: AVX-512 4 rows x 4 packets, 16
/// registers 6 x 2), k one step at a time: a panel of a is kRows rows, k-major (a(i0 + r, s) at
/// dst[s kRows + r], what the tile broadcasts from), a panel of b is kCols columns, k-major (one
/// row of kCols at dst + s kCols, the tile's packet loads). Both are packed once per product,
/// reading the operands through any strides: a transposed view costs no copy. Output blocks of
/// about 256 x 256 per OpenMP thread; k in slices whose piece of a b panel is 32 KiB (L1 holds it
/// while the block's a panels stream from L2; 16 KiB slices measured 5-10% slower at k = 3072).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <utility>

#include "weft/backend/cpu/gemm/block.hpp"
#include "weft/backend/cpu/gemm/packed.hpp"

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu {

/// The packets the FMA GEMM runs on in this build ("avx512", "avx2", "neon", ...), for logs.
inline const char* gemm_fma_isa() { return simd::kIsaName; }

/// A matrix read through element strides: (i, j) at data[i rs + j cs].
template <class T>
struct StridedMatrix {
  const T* data;
  std::int64_t rs, cs;
  T operator()(std::int64_t i, std::int64_t j) const { return data[i * rs + j * cs]; }
};

/// The FMA kernel of gemm_packed for T = float or double (see there for the members).
template <class T>
struct GemmFmaKernel {
  using Elem = T;
  using Packed = T;
  using Acc = T;
  using Tile = BlockGemmTile<T>;
  static constexpr std::int64_t kRows = Tile::kRows, kCols = Tile::kCols, kStep = 1;
  static constexpr std::int64_t kStepElemsA = kRows, kStepElemsB = kCols, kAccFloats = kRows * kCols;
  static constexpr std::int64_t kBlockRows = 256 / kRows * kRows, kBlockCols = std::max<std::int64_t>(256 / kCols, 1) * kCols;
  static constexpr std::int64_t kSliceSteps = std::max<std::int64_t>(16, 32768 / (kCols * std::int64_t(sizeof(T))));

  struct Thread {};

  /// acc (kRows x kCols, row-major) = (zero if `first`, else acc) + the `steps` steps of a packed
  /// a and b panel. Defined below the class: not inline, so that a program linking weft_kernels
  /// calls the library's copy (the extern declarations at the end of this file).
  static void block(const T* a, const T* b, std::int64_t steps, T* acc, bool first);

  /// Packs rows i0.. i0 + kRows - 1 of a (n x k): dst[s kRows + r] = a(i0 + r, s), zeros past n.
  static void pack_a(const StridedMatrix<T>& a, std::int64_t n, std::int64_t k, std::int64_t i0, std::int64_t steps,
                     T* dst) {
    const std::int64_t rows = std::min(kRows, n - i0);
    if (rows < kRows) {
      std::memset(dst, 0, std::size_t(steps * kRows) * sizeof(T));
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t s = 0; s < k; ++s) dst[s * kRows + r] = a(i0 + r, s);
      return;
    }
    // Whole panels step by step, the kRows elements of a step written together: contiguous
    // writes (a row at a time wrote every kRows-th element: 1.6x slower at 1024 x 1024 on Zen 5),
    // and a kRows-element copy per step where a is a transposed view.
    const T* base = a.data + i0 * a.rs;
    if (a.cs == 1) {
      for (std::int64_t s = 0; s < k; ++s)
WEFT_HOST_UNROLL(8)
        for (std::int64_t r = 0; r < kRows; ++r) dst[s * kRows + r] = base[r * a.rs + s];
    } else {
      for (std::int64_t s = 0; s < k; ++s)
WEFT_HOST_UNROLL(8)
        for (std::int64_t r = 0; r < kRows; ++r) dst[s * kRows + r] = base[r * a.rs + s * a.cs];
    }
  }

  /// Packs columns j0.. j0 + kCols - 1 of b (k x m): dst[s kCols + c] = b(s, j0 + c), zeros past m.
  static void pack_b(const StridedMatrix<T>& b, std::int64_t /*k: steps covers it*/, std::int64_t m, std::int64_t j0, std::int64_t steps,
                     T* dst) {
    const std::int64_t cols = std::min(kCols, m - j0);
    for (std::int64_t s = 0; s < steps; ++s) {
      T* d = dst + s * kCols;
      const T* row = b.data + s * b.rs + j0 * b.cs;
      if (b.cs == 1) std::memcpy(d, row, std::size_t(cols) * sizeof(T));
      else
        for (std::int64_t c = 0; c < cols; ++c) d[c] = row[c * b.cs];
      for (std::int64_t c = cols; c < kCols; ++c) d[c] = T(0);
    }
  }

  /// Copies the register block at acc (rows i0.., columns j0..) into c, within n x m.
  static void store(const T* acc, T* c, std::int64_t ldc, std::int64_t i0, std::int64_t j0, std::int64_t n,
                    std::int64_t m) {
    const std::int64_t cols = std::min(kCols, m - j0);
    for (std::int64_t r = 0; r < kRows && i0 + r < n; ++r)
      std::memcpy(c + (i0 + r) * ldc + j0, acc + r * kCols, std::size_t(cols) * sizeof(T));
  }
};

template <class T>
void GemmFmaKernel<T>::block(const T* a, const T* b, std::int64_t steps, T* acc, bool first) {
  if (first) block_gemm_tile<T, false>(a, 1, kRows, b, kCols, acc, kCols, steps);
  else block_gemm_tile<T, true>(a, 1, kRows, b, kCols, acc, kCols, steps);
}

/// Whether the FMA GEMM is expected to beat Eigen's for an n x k x m float product, with or
/// without a fused epilogue (same-run comparisons, AMD Zen 5, 2 threads): from 2^21 multiply-adds
/// (128^3: 1.04-1.12x Eigen; 256^3 1.2-1.3x, 1024^3 1.35x, GPT-2's layer shapes 1.2-1.5x, products
/// 4x deeper than wide 1.14-1.24x) and with at least 4/5 of the register blocks' columns real
/// (m = 200 pads to 256 columns: 1.0x; m = 40 to 64: 0.7-0.8x; m = 16: 0.3x). Below, Eigen's
/// smaller register blocks and packing waste less (64^3: 0.64-0.7x, 32^3: 0.35x).
/// gemm_fma_always (false): the tests set it to run every shape through the FMA GEMM.
inline std::atomic<bool> gemm_fma_always{false};
template <class T>
bool gemm_fma_pays(std::int64_t n, std::int64_t k, std::int64_t m) {
  constexpr std::int64_t kCols = BlockGemmTile<T>::kCols;
  const std::int64_t padded = (m + kCols - 1) / kCols * kCols;
  return gemm_fma_always.load(std::memory_order_relaxed) || (n * k * m >= kSmallGemm && 5 * m >= 4 * padded);
}

/// The packers of the FMA kernel for a batch of strided operands (a[bi] is a read at a.data +
/// sum_d coord_d a_batch[d], likewise b): pack_a(bi, i0, steps, dst), pack_b(bi, j0, steps, dst),
/// as gemm_packed_batched and gemm_packed_blocks take them (batch_offsets is a few multiply-adds,
/// once per packed panel).
template <class T>
auto fma_packers(const StridedMatrix<T>& a, const Strides& a_batch, const StridedMatrix<T>& b, const Strides& b_batch,
                 const Shape& batch, std::int64_t n, std::int64_t k, std::int64_t m) {
  using K = GemmFmaKernel<T>;
  auto pack_a = [=](std::int64_t bi, std::int64_t i0, std::int64_t steps, T* dst) {
    std::int64_t oa, ob;
    batch_offsets(bi, batch, a_batch, b_batch, oa, ob);
    K::pack_a(StridedMatrix<T>{a.data + oa, a.rs, a.cs}, n, k, i0, steps, dst);
  };
  auto pack_b = [=](std::int64_t bi, std::int64_t j0, std::int64_t steps, T* dst) {
    std::int64_t oa, ob;
    batch_offsets(bi, batch, a_batch, b_batch, oa, ob);
    K::pack_b(StridedMatrix<T>{b.data + ob, b.rs, b.cs}, k, m, j0, steps, dst);
  };
  return std::pair{pack_a, pack_b};
}

/// c[bi] = a[bi] (n x k) b[bi] (k x m) for every batch index bi of `batch`, operands as
/// fma_packers' (any strides: a transposed view is read in place), c contiguous (batch..., n, m).
template <class T>
void gemm_fma_batched(const StridedMatrix<T>& a, const Strides& a_batch, const StridedMatrix<T>& b,
                      const Strides& b_batch, T* c, const Shape& batch, std::int64_t n, std::int64_t k, std::int64_t m) {
  const auto [pack_a, pack_b] = fma_packers(a, a_batch, b, b_batch, batch, n, k, m);
  gemm_packed_batched<GemmFmaKernel<T>>(batch, n, k, m, pack_a, pack_b, c);
}

/// The same product in blocks: finish(bi, i0, i1, j0, j1, block, ld) gets rows [i0, i1) x columns
/// [j0, j1) of c[bi] (block(i - i0, j - j0) at block[(i - i0) ld + j - j0]) once they are
/// complete, on the thread that computed them (a fused epilogue).
template <class T, class Finish>
void gemm_fma_blocks(const StridedMatrix<T>& a, const Strides& a_batch, const StridedMatrix<T>& b,
                     const Strides& b_batch, const Shape& batch, std::int64_t n, std::int64_t k, std::int64_t m,
                     const Finish& finish) {
  const auto [pack_a, pack_b] = fma_packers(a, a_batch, b, b_batch, batch, n, k, m);
  gemm_packed_blocks<GemmFmaKernel<T>>(batch, n, k, m, pack_a, pack_b, finish);
}

/// c (n x m, rows m apart) = a (n x k, rows lda apart) b (+ bias: m elements, or null) for n =
/// R < kRows rows, b as pack_all_panels packs it for GemmFmaKernel<T> (column panels of kCols,
/// k-major): each panel streamed once for all R rows in one sweep over k, where gemm_packed's
/// tile computes kRows - R padded rows too and reads a block's panels a slice at a time (at 1
/// row, GPT-2's weights from memory: 82 GB/s against the tile's 38-50, 1.5-2.5x faster). Each
/// output is the sum gemm_packed forms, in its order (slices of kSliceSteps steps, each summed
/// from zero, then added to the slices before), and so has its bits.
template <class T, int R>
void gemm_fma_rows_prepacked(const T* a, std::int64_t lda, std::int64_t k, std::int64_t m, const T* panels,
                             const T* bias, T* c) {
  using K = GemmFmaKernel<T>;
  constexpr int NV = BlockGemmTile<T>::kVecs, W = BlockGemmTile<T>::kLanes;
  constexpr std::int64_t kCols = K::kCols;
  using V = simd::Vec<T, W>;
  const std::int64_t count = (m + kCols - 1) / kCols;
  const int threads = int(std::min<std::int64_t>(count, threads_for(k * m)));
  WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) schedule(static) if (threads > 1))
  for (std::int64_t u = 0; u < count; ++u) {
    const T* panel = panels + u * k * kCols;
    V sum[R][NV];
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < NV; ++v) sum[r][v] = V::broadcast(T(0));
    for (std::int64_t s0 = 0; s0 < k; s0 += K::kSliceSteps) {
      const std::int64_t s1 = std::min(k, s0 + K::kSliceSteps);
      V part[R][NV];
      for (int r = 0; r < R; ++r)
        for (int v = 0; v < NV; ++v) part[r][v] = V::broadcast(T(0));
      for (std::int64_t s = s0; s < s1; ++s) {
        V bs[NV];
        for (int v = 0; v < NV; ++v) bs[v] = V::load(panel + s * kCols + v * W);
        for (int r = 0; r < R; ++r) {
          const V x{a[r * lda + s] - typename V::Raw{}};  // a broadcast load, as block_gemm_tile's
          for (int v = 0; v < NV; ++v) part[r][v] = simd::mul_add(x, bs[v], part[r][v]);
        }
      }
      for (int r = 0; r < R; ++r)
        for (int v = 0; v < NV; ++v) sum[r][v] = s0 == 0 ? part[r][v] : sum[r][v] + part[r][v];
    }
    const std::int64_t j0 = u * kCols, cols = std::min(kCols, m - j0);
    alignas(64) T row[kCols];
    for (int r = 0; r < R; ++r) {
      for (int v = 0; v < NV; ++v) sum[r][v].store(row + v * W);
      T* dst = c + r * m + j0;
      if (bias)
        for (std::int64_t j = 0; j < cols; ++j) dst[j] = row[j] + bias[j0 + j];
      else
        std::memcpy(dst, row, std::size_t(cols) * sizeof(T));
    }
  }
}

/// gemm_fma_rows_prepacked for the n (1 <= n < kRows) rows of a.
template <class T, int R = 1>
void gemm_fma_few_rows_prepacked(const T* a, std::int64_t lda, std::int64_t n, std::int64_t k, std::int64_t m,
                                 const T* panels, const T* bias, T* c) {
  if constexpr (R < BlockGemmTile<T>::kRows) {
    if (n == R) gemm_fma_rows_prepacked<T, R>(a, lda, k, m, panels, bias, c);
    else gemm_fma_few_rows_prepacked<T, R + 1>(a, lda, n, k, m, panels, bias, c);
  }
}

// Compiled once in the weft_kernels library (src/kernels.cpp: WEFT_GEMM_FMA_INSTANCES(, float)):
// the files of a program that links it call these rather than instantiating them (a product with
// an epilogue still instantiates its own blocks' driver, which calls the library's register block).
#define WEFT_GEMM_FMA_INSTANCES(EXTERN, T)                                                                    \
  EXTERN template void GemmFmaKernel<T>::block(const T*, const T*, std::int64_t, T*, bool);                  \
  EXTERN template void gemm_fma_batched<T>(const StridedMatrix<T>&, const Strides&, const StridedMatrix<T>&,   \
                                           const Strides&, T*, const Shape&, std::int64_t, std::int64_t,       \
                                           std::int64_t);
#if defined(WEFT_PRECOMPILED_KERNELS)
WEFT_GEMM_FMA_INSTANCES(extern, float)
WEFT_GEMM_FMA_INSTANCES(extern, double)
#endif

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)

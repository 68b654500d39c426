// SPDX-License-Identifier: MIT
/// @file The direct convolution product: the register tile reads its patch operand in place from a padded channels-last source, where the implicit GEMM packs it first (float and double on FMA packets, bfloat16 on AVX512-BF16's pair dot product).
///
/// out(i, o) = sum_s A(i, s) B(s, o) with A(i, s) = src[base(i) + offset(s)]: row i an output
/// position (its window's origin in the source, base), column s = (tap t, channel c) at offset
/// tap_offset(t) + c. In a channels-last source whose padding is part of the copy, every window
/// lies inside and a tap's channels are one run of adjacent elements, so the tile broadcasts
/// A(i, s) straight from the source (bfloat16: a pair of adjacent channels, one 32-bit word): no
/// panel of A is packed (the implicit GEMM's packing of the patches was a quarter of a ResNet
/// layer's forward, each packed element feeding only output-channels / 16 FMAs), and the rows are
/// any positions (strided, across output rows and images) since each tile row has its own pointer.
///
/// B is the weight, packed once as the GEMM kernel's column panels (DirectKernel<T>::K: 64 output
/// channels a panel), the same panels the implicit GEMM reads, prepacked ones included. The loops
/// are the packed GEMM's (cpu/gemm/packed.hpp): output blocks of up to 256 x 256 per task, k in
/// slices whose piece of a b panel stays in L1 (float: 32 KiB) or L2 (bfloat16: 64 KiB) while the
/// block's row tiles pass over it; each tile sums a slice from zero and adds it to the block,
/// which lives in the task's buffer (256 KiB, in L2) and goes to `finish` when complete. Sums run
/// in order of s within a slice, slices in order: the same bound as the GEMM's, |error| <= k u
/// sum_s |A B|.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <deque>
#include <type_traits>
#include <vector>

#include "weft/backend/cpu/gemm/dpbf16.hpp"
#include "weft/backend/cpu/gemm/fma.hpp"

namespace weft::detail::cpu {

/// Whether this build has a direct product for T: float, double; bfloat16 on AVX512-BF16.
template <class T>
inline constexpr bool direct_kernel_built_v =
    std::is_same_v<T, float> || std::is_same_v<T, double> || (std::is_same_v<T, weft::bfloat16> && WEFT_GEMM_DPBF16);

}  // namespace weft::detail::cpu

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu {

/// The direct product's register tile for T: kRows output positions x BlockGemmTile<T>'s kCols
/// output channels (the weight panels' width). With 32 registers, 6 rows: 24 sums, 4 B packets
/// and a broadcast, 24 FMAs per 4 loads and 6 broadcasts (4 rows, the GEMM's tile, measured
/// the same on ResNet-18's 3x3 layers, within noise); 16 registers: the GEMM's 6 x 2.
template <class T>
struct DirectTile {
  static constexpr int kRows = simd::kBytes >= 64 ? 6 : BlockGemmTile<T>::kRows;
};

/// A run of a slice's columns whose offsets are consecutive: columns s = column .. column +
/// length - 1 of every row read src[base(i) + offset .. + length - 1].
struct DirectRun {
  std::int64_t offset = 0, length = 0, column = 0;
};

/// acc (R x NV packets, rows ldc apart) = sum, or acc + sum unless `first`: how both direct tiles
/// hand their register sums to the block.
template <class V, int R, int NV, class T>
inline __attribute__((always_inline)) void store_tile_sums(V (&sum)[R][NV], T* acc, std::int64_t ldc, bool first) {
  constexpr int W = int(sizeof(typename V::Raw) / sizeof(T));
WEFT_HOST_UNROLL(8)
  for (int r = 0; r < R; ++r)
WEFT_HOST_UNROLL(4)
    for (int v = 0; v < NV; ++v) {
      if (!first) sum[r][v] = V::load(acc + r * ldc + v * W) + sum[r][v];
      sum[r][v].store(acc + r * ldc + v * W);
    }
}

/// acc (kRows x kCols of BlockGemmTile<T>, rows ldc apart) = (`first` ? 0 : acc) + sum over the
/// runs' columns of A B: row r of A read from rows[r] + run offset, B the panel at b (kCols
/// elements a column s, k-major; a run's first row at its column). The B packets are loaded once
/// a step for the kRows broadcasts.
/// Not inlined: one body per T, its registers allocated on its own (inlined into a driver whose
/// lambdas held more live values, GCC spilled the B packets to the stack every step: the input
/// gradient ran at 0.75x the forward's rate).
template <class T>
__attribute__((noinline)) void direct_tile(const T* const* rows, const DirectRun* runs, std::int64_t count,
                                                       const T* b, T* acc, std::int64_t ldc, bool first) {
  using Tile = BlockGemmTile<T>;
  constexpr int R = DirectTile<T>::kRows, NV = Tile::kVecs, W = Tile::kLanes;
  constexpr std::int64_t kCols = Tile::kCols;
  using V = simd::Vec<T, W>;
  V sum[R][NV];
WEFT_HOST_UNROLL(8)
  for (int r = 0; r < R; ++r)
WEFT_HOST_UNROLL(4)
    for (int v = 0; v < NV; ++v) sum[r][v] = V::broadcast(T(0));
  for (std::int64_t run = 0; run < count; ++run) {
    const T* a[R];
WEFT_HOST_UNROLL(8)
    for (int r = 0; r < R; ++r) a[r] = rows[r] + runs[run].offset;
    const std::int64_t length = runs[run].length;
    const T* br = b + runs[run].column * kCols;
    for (std::int64_t s = 0; s < length; ++s) {
      V bs[NV];
WEFT_HOST_UNROLL(4)
      for (int v = 0; v < NV; ++v) {
        bs[v] = V::load(br + s * kCols + v * W);
        simd::hold_in_register(bs[v]);  // once for the R broadcasts (else each FMA reloads it)
      }
WEFT_HOST_UNROLL(8)
      for (int r = 0; r < R; ++r) {
        const V x{a[r][s] - typename V::Raw{}};  // a broadcast load (see block_gemm_tile)
WEFT_HOST_UNROLL(4)
        for (int v = 0; v < NV; ++v) sum[r][v] = simd::mul_add(x, bs[v], sum[r][v]);
      }
    }
  }
  store_tile_sums(sum, acc, ldc, first);
}

// The weft_kernels library's copies (src/kernels.cpp), as block_gemm_panels' (gemm/block.hpp).
#define WEFT_DIRECT_TILE_INSTANCES(EXTERN, T) \
  EXTERN template void direct_tile<T>(const T* const*, const DirectRun*, std::int64_t, const T*, T*, std::int64_t, bool);
#if WEFT_LINKED_KERNELS  // core/config.hpp
WEFT_DIRECT_TILE_INSTANCES(extern, float)
WEFT_DIRECT_TILE_INSTANCES(extern, double)
#endif

/// What the direct product runs on for T: the register tile, the layout of the weight panels it
/// reads (packed by the GEMM kernel K for T's convolutions) and the k columns a slice holds.
/// float and double: direct_tile on GemmFmaKernel's panels (kCols columns, one row a column s).
template <class T>
struct DirectKernel {
  using K = GemmFmaKernel<T>;
  using Packed = T;
  using Acc = T;  // the finished blocks' type
  static constexpr std::int64_t kRows = DirectTile<T>::kRows, kCols = K::kCols, kSlice = K::kSliceSteps;
  /// Packed elements of one column panel, and from a panel's start to column s's row.
  static std::int64_t panel_size(std::int64_t k) { return k * kCols; }
  static std::int64_t row_offset(std::int64_t s) { return s * kCols; }
  static void tile(const T* const* rows, const DirectRun* runs, std::int64_t count, const Packed* b, Acc* acc,
                   std::int64_t ldc, bool first) {
    direct_tile<T>(rows, runs, count, b, acc, ldc, first);
  }
};

#if WEFT_GEMM_DPBF16
/// The bfloat16 tile on AVX512-BF16: acc (6 x 64 fp32, rows ldc apart) = (`first` ? 0 : acc) +
/// the runs' products, pairs of k at a time: vdpbf16ps with row r's pair (2 adjacent channels, one
/// 32-bit word of the channels-last source: every run's offset and length even) broadcast, the
/// weight as GemmDpbf16Kernel's b panels (a row of 64 words a pair). Each pair's two products are
/// exact in fp32 and summed in the instruction's order, as the GEMM kernel sums them
/// (gemm/dpbf16.hpp). Not inlined, as direct_tile.
__attribute__((noinline)) inline void direct_tile_dpbf16(const weft::bfloat16* const* rows, const DirectRun* runs,
                                                         std::int64_t count, const std::uint32_t* b, float* acc,
                                                         std::int64_t ldc, bool first) {
  constexpr int R = 6, NV = 4;
  __m512 sum[R][NV];
  WEFT_HOST_UNROLL(8)
  for (int r = 0; r < R; ++r)
    WEFT_HOST_UNROLL(4)
    for (int v = 0; v < NV; ++v) sum[r][v] = _mm512_setzero_ps();
  for (std::int64_t run = 0; run < count; ++run) {
    const std::uint32_t* a[R];
    WEFT_HOST_UNROLL(8)
    for (int r = 0; r < R; ++r) a[r] = reinterpret_cast<const std::uint32_t*>(rows[r] + runs[run].offset);
    const std::int64_t pairs = runs[run].length / 2;
    const std::uint32_t* br = b + runs[run].column / 2 * (16 * NV);
    for (std::int64_t p = 0; p < pairs; ++p, br += 16 * NV) {
      __m512bh bv[NV];
      WEFT_HOST_UNROLL(4)
      for (int v = 0; v < NV; ++v) bv[v] = (__m512bh)_mm512_loadu_si512(br + 16 * v);
      WEFT_HOST_UNROLL(8)
      for (int r = 0; r < R; ++r) {
        const __m512bh x = (__m512bh)_mm512_set1_epi32(int(a[r][p]));  // the {1to16} operand
        WEFT_HOST_UNROLL(4)
        for (int v = 0; v < NV; ++v) sum[r][v] = _mm512_dpbf16_ps(sum[r][v], x, bv[v]);
      }
    }
  }
  WEFT_HOST_UNROLL(8)
  for (int r = 0; r < R; ++r)
    WEFT_HOST_UNROLL(4)
    for (int v = 0; v < NV; ++v) {
      float* dst = acc + r * ldc + 16 * v;
      _mm512_storeu_ps(dst, first ? sum[r][v] : _mm512_add_ps(_mm512_loadu_ps(dst), sum[r][v]));
    }
}

/// bfloat16 on AVX512-BF16: direct_tile_dpbf16 on GemmDpbf16Kernel's panels (64 columns, pairs of
/// k in rows of 64 words, k padded to steps of 32), slices of 512 columns (16 of the GEMM's
/// steps: a panel's slice is 64 KiB, as the GEMM's), the blocks fp32 sums rounded once by the
/// caller.
template <>
struct DirectKernel<weft::bfloat16> {
  using K = GemmDpbf16Kernel;
  using Packed = std::uint32_t;
  using Acc = float;
  static constexpr std::int64_t kRows = 6, kCols = K::kCols, kSlice = K::kSliceSteps * K::kStep;
  static std::int64_t panel_size(std::int64_t k) { return (k + K::kStep - 1) / K::kStep * K::kStepElemsB; }
  static std::int64_t row_offset(std::int64_t s) { return s / 2 * kCols; }
  static void tile(const weft::bfloat16* const* rows, const DirectRun* runs, std::int64_t count, const Packed* b,
                   Acc* acc, std::int64_t ldc, bool first) {
    direct_tile_dpbf16(rows, runs, count, b, acc, ldc, first);
  }
};
#endif

/// The runs of the k columns cut into slices of DirectKernel<T>::kSlice columns: slice q's runs at
/// runs[first[q] .. first[q + 1]); column s's offset is offset(s), and only the columns whose tap,
/// tap_of(s), is in the mask `taps` (bit t) are run: the others read the zero padding.
struct DirectSlices {
  std::vector<DirectRun> runs;
  std::vector<std::int64_t> first;
};
template <class T, class Offset, class TapOf>
DirectSlices direct_slices(std::int64_t k, const Offset& offset, const TapOf& tap_of, std::uint64_t taps) {
  constexpr std::int64_t kSlice = DirectKernel<T>::kSlice;
  DirectSlices d;
  auto kept = [&](std::int64_t s) {
    const std::int64_t t = tap_of(s);
    return t >= 64 || (taps >> t & 1) != 0;
  };
  for (std::int64_t s0 = 0; s0 < k; s0 += kSlice) {
    d.first.push_back(std::int64_t(d.runs.size()));
    const std::int64_t s1 = std::min(k, s0 + kSlice);
    for (std::int64_t s = s0; s < s1;) {
      if (!kept(s)) {
        ++s;
        continue;
      }
      DirectRun run{offset(s), 1, s};
      while (s + run.length < s1 && kept(s + run.length) && offset(s + run.length) == run.offset + run.length) ++run.length;
      d.runs.push_back(run);
      s += run.length;
    }
  }
  d.first.push_back(std::int64_t(d.runs.size()));
  return d;
}

/// A mask of every tap (at most 64 are told apart: past that a mask means every tap).
inline constexpr std::uint64_t kAllTaps = ~std::uint64_t(0);

/// For each group g < groups: the rows x k x m product of A_g(i, s) = src_g[row_base(g, i) +
/// offset(s)] (every row's window inside its source) and the weight panels at `weights` + g
/// packed_panels_size(k, m) (DirectKernel<T>::K's layout), on up to `threads` threads in tasks of
/// (group, row block, column block); finish(g, i0, i1, j0, j1, block, ld) receives each finished
/// block (block(i - i0, j - j0) at block[(i - i0) ld + j - j0], DirectKernel<T>::Acc sums).
///
/// Padding skipped: row_taps(i) is the mask of the taps whose elements lie in the data for row i
/// (kAllTaps where all do; rows `plane` apart, an image's, have the same), tap_of(s) column s's
/// tap. Within a block the rows go to the tiles in order of their masks, and a tile runs only the
/// columns of the taps any of its rows reaches:
/// the others would add products with the padding's zeros. A 4 x 4 output under a 3 x 3 kernel
/// of padding 1 reaches 100 of its 144 (position, tap) pairs: ResNet-18's last stage, bfloat16,
/// ran at 0.64x oneDNN's rate counting every pair, and oneDNN's direct kernels skip them. A block
/// is sorted only where its tiles in the rows' order would run over 4% more (row, tap) pairs than
/// its rows reach: sorting and putting the block back in order cost 3% of a 32 x 32 layer, whose
/// tiles in order run 2.4% more (an 8 x 8 layer's 15%: sorted, it ran 7% faster).
template <class T, class Source, class RowBase, class Offset, class TapOf, class RowTaps, class Finish>
void direct_conv_product(std::int64_t groups, std::int64_t rows, std::int64_t plane, std::int64_t k, std::int64_t m,
                         const Source& source, const RowBase& row_base, const Offset& offset, const TapOf& tap_of,
                         const RowTaps& row_taps, const typename DirectKernel<T>::Packed* weights, int threads,
                         const Finish& finish) {
  using DK = DirectKernel<T>;
  using K = typename DK::K;
  using Acc = typename DK::Acc;
  // rows of an output block: as many whole tiles as fit 256
  constexpr std::int64_t R = DK::kRows, kCols = DK::kCols, kBlockRows = 256 / R * R;
  if (rows == 0 || m == 0) return;
  const DirectSlices all_taps = direct_slices<T>(k, offset, tap_of, kAllTaps);
  std::uint64_t kernel_taps = 0;  // the taps told apart (kAllTaps is every bit): only these count
  for (std::int64_t s = 0; s < k; ++s) kernel_taps |= tap_of(s) < 64 ? std::uint64_t(1) << tap_of(s) : kAllTaps;
  const std::int64_t group_panels = packed_panels_size<K>(k, m), panel = DK::panel_size(k);
  // Blocks of up to kBlockRows x kBlockCols. Past one block of rows, the rows in a multiple of
  // `threads` blocks of equal size (whole tiles), so that every thread gets the same work
  // (ResNet-18's 8 x 8 stage, 4096 rows: 17 blocks of 252 left one thread a block alone; 18 of
  // 228). Few rows (a small batch's last layers: wide weights) stay one block, and the columns
  // split into narrower blocks (down to one panel) until each thread has two tasks: each weight
  // panel is then read by one thread.
  const std::int64_t rounds = (rows + threads * kBlockRows - 1) / (threads * kBlockRows);
  std::int64_t block_rows =
      rows <= kBlockRows ? kBlockRows
                         : std::min(kBlockRows, ((rows + threads * rounds - 1) / (threads * rounds) + R - 1) / R * R);
  // Images of at most half a block: blocks of whole images, a multiple of R of them where R fit,
  // so that the rows of each tap mask (the padding's corners, edges and inside) fill whole tiles
  // once sorted. ResNet-18's 4 x 4 stage in blocks of 174 rows ran its tiles over 7% more (row,
  // tap) pairs than its rows reach; in blocks of 12 images, 0.6%.
  if (rows > kBlockRows && 2 * plane <= kBlockRows) {
    std::int64_t images = kBlockRows / plane;
    if (images >= R) images = images / R * R;
    if (images * plane % R == 0) block_rows = images * plane;
  }
  const std::int64_t row_blocks = (rows + block_rows - 1) / block_rows;
  std::int64_t block_cols = K::kBlockCols;
  while (block_cols > kCols && groups * row_blocks * ((m + block_cols - 1) / block_cols) < 2 * threads) block_cols /= 2;
  block_cols = std::max(block_cols / kCols, std::int64_t(1)) * kCols;
  const std::int64_t col_blocks = (m + block_cols - 1) / block_cols, tasks = groups * row_blocks * col_blocks;
  threads = int(std::min<std::int64_t>(threads, tasks));
  WEFT_PRAGMA_OMP(omp parallel num_threads(threads) if (threads > 1))
  {
    const PackedGemmScratch<Acc> buffer(3, kBlockRows * K::kBlockCols), in_order(2, kBlockRows * K::kBlockCols);
    std::vector<const T*> row_at(static_cast<std::size_t>(kBlockRows));
    std::vector<std::int64_t> order(static_cast<std::size_t>(kBlockRows));
    std::vector<std::uint64_t> taps(static_cast<std::size_t>(kBlockRows));
    std::vector<const DirectSlices*> tile_slices(static_cast<std::size_t>(kBlockRows / R));
    std::deque<std::pair<std::uint64_t, DirectSlices>> masked;  // the slices of each tile mask met
    auto slices_of = [&](std::uint64_t mask) -> const DirectSlices* {
      if (mask == kAllTaps) return &all_taps;
      for (const auto& [known, d] : masked)
        if (known == mask) return &d;
      return &masked.emplace_back(mask, direct_slices<T>(k, offset, tap_of, mask)).second;
    };
    WEFT_PRAGMA_OMP(omp for schedule(dynamic, 1))
    for (std::int64_t task = 0; task < tasks; ++task) {
      const std::int64_t g = task / (row_blocks * col_blocks), rb = task / col_blocks % row_blocks;
      const std::int64_t i0 = rb * block_rows, j0 = task % col_blocks * block_cols;
      const std::int64_t n = std::min(block_rows, rows - i0), mc = std::min(block_cols, m - j0);
      const std::int64_t tiles = (n + R - 1) / R, panels = (mc + kCols - 1) / kCols;
      const T* src = source(g);
      // the block's rows by tap mask, those reaching every tap first (stable: the rest in order),
      // where the tiles in the rows' order would run 4% more (row, tap) pairs than the rows reach
      std::int64_t reached = 0, unsorted = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        order[std::size_t(i)] = i, taps[std::size_t(i)] = row_taps(i0 + i);
        reached += std::popcount(taps[std::size_t(i)] & kernel_taps);
      }
      for (std::int64_t t = 0; t < tiles; ++t) {
        std::uint64_t mask = 0;
        for (std::int64_t i = t * R; i < std::min(n, (t + 1) * R); ++i) mask |= taps[std::size_t(i)];
        unsorted += std::popcount(mask & kernel_taps) * std::min(R, n - t * R);
      }
      const bool sorted = unsorted * 25 > reached * 26;
      if (sorted)
        std::stable_sort(order.begin(), order.begin() + n,
                         [&](std::int64_t a, std::int64_t b) { return taps[std::size_t(a)] > taps[std::size_t(b)]; });
      // rows past the block repeat its last (computed, never handed out)
      for (std::int64_t i = 0; i < tiles * R; ++i) row_at[std::size_t(i)] = src + row_base(g, i0 + order[std::size_t(std::min(i, n - 1))]);
      for (std::int64_t t = 0; t < tiles; ++t) {
        std::uint64_t mask = 0;
        for (std::int64_t i = t * R; i < std::min(n, (t + 1) * R); ++i) mask |= taps[std::size_t(order[std::size_t(i)])];
        tile_slices[std::size_t(t)] = slices_of(mask);
      }
      const typename DK::Packed* b_group = weights + g * group_panels + j0 / kCols * panel;
      for (std::int64_t q = 0; q + 1 < std::int64_t(all_taps.first.size()); ++q)
        for (std::int64_t u = 0; u < panels; ++u)
          for (std::int64_t t = 0; t < tiles; ++t) {
            const DirectSlices& d = *tile_slices[std::size_t(t)];
            DK::tile(row_at.data() + t * R, d.runs.data() + d.first[q], d.first[q + 1] - d.first[q],
                     b_group + u * panel, buffer.get() + t * R * block_cols + u * kCols, block_cols, q == 0);
          }
      const Acc* block = buffer.get();
      if (sorted) {  // back in the rows' order
        for (std::int64_t i = 0; i < n; ++i)
          std::copy(block + i * block_cols, block + i * block_cols + mc, in_order.get() + order[std::size_t(i)] * block_cols);
        block = in_order.get();
      }
      finish(g, i0, i0 + n, j0, j0 + mc, block, block_cols);
    }
  }
}

/// The weight gradient's register tile: acc (DirectTile<T>::kRows x kCols, rows ldc apart) = (`first` ? 0 : acc) +
/// sum over q < count of dy_rows[r][dy_offset[q]] x[x_offset[q] + 0 .. kCols - 1]: output
/// channels r of one tile by kCols patch columns that are one run of the source (a tap's
/// channels), summed over positions q; both operands read in place (dy broadcast through any
/// strides, x's padded channels-last copy as packets). Not inlined, as direct_tile.
template <class T>
__attribute__((noinline)) void direct_weight_tile(const T* const* dy_rows, const std::int64_t* dy_offset, const T* x,
                                                  const std::int64_t* x_offset, std::int64_t count, T* acc,
                                                  std::int64_t ldc, bool first) {
  using Tile = BlockGemmTile<T>;
  constexpr int R = DirectTile<T>::kRows, NV = Tile::kVecs, W = Tile::kLanes;
  using V = simd::Vec<T, W>;
  V sum[R][NV];
WEFT_HOST_UNROLL(8)
  for (int r = 0; r < R; ++r)
WEFT_HOST_UNROLL(4)
    for (int v = 0; v < NV; ++v) sum[r][v] = V::broadcast(T(0));
  const T* dy[R];
WEFT_HOST_UNROLL(8)
  for (int r = 0; r < R; ++r) dy[r] = dy_rows[r];
  for (std::int64_t q = 0; q < count; ++q) {
    const T* xq = x + x_offset[q];
    const std::int64_t d = dy_offset[q];
    V xs[NV];
WEFT_HOST_UNROLL(4)
    for (int v = 0; v < NV; ++v) {
      xs[v] = V::load(xq + v * W);
      simd::hold_in_register(xs[v]);
    }
WEFT_HOST_UNROLL(8)
    for (int r = 0; r < R; ++r) {
      const V g{dy[r][d] - typename V::Raw{}};  // a broadcast load
WEFT_HOST_UNROLL(4)
      for (int v = 0; v < NV; ++v) sum[r][v] = simd::mul_add(g, xs[v], sum[r][v]);
    }
  }
  store_tile_sums(sum, acc, ldc, first);
}

/// The weight gradient as a direct product, for each group g < groups:
///   sums[(g og + o) k + sum_column[s]] (+)= sum over positions p of dy(p, g og + o) x_g(p, s)
/// with dy(p, c) = dy[n dy_image + c dy_channel + dy_offset[q]] and x_g(p, s) = x[n x_image +
/// g x_group + x_offset[q] + column_offset[s]] for p = n plane + q (plane = x_offset's length);
/// every kCols columns of a panel one run (column_offset consecutive; k a multiple of kCols), of
/// one tap, column_tap[s]. A panel sums only the positions whose window reaches its tap in the
/// data (bit column_tap of position_taps[q]): x is zero in the padding.
/// sum_column puts the patches' columns in the weight's order, so that with one copy `sums` can
/// be dw itself. `sums` holds `copies` arrays of groups og k elements back to back: with more than
/// one, the positions split over the threads, each summing into its own (the caller adds them);
/// with one, the threads split the output tiles and each sweeps every position. `overwrite`: the
/// sums hold nothing yet, and each copy's first chunk writes them (no zeroing pass). Positions go
/// in chunks (across images) whose x panel (chunk x kCols) and dy rows stay in L2 while every tile
/// of output channels reads them.
template <class T>
void direct_weight_product(std::int64_t groups, std::int64_t og, std::int64_t k, std::int64_t images,
                           const std::vector<std::int64_t>& x_offset, const std::vector<std::uint64_t>& position_taps,
                           const T* x, std::int64_t x_image, std::int64_t x_group,
                           const std::vector<std::int64_t>& column_offset, const std::vector<std::int64_t>& column_tap,
                           const std::vector<std::int64_t>& dy_offset, const T* dy, std::int64_t dy_image,
                           std::int64_t dy_channel, int threads, int copies, const std::vector<std::int64_t>& sum_column,
                           bool overwrite, T* sums) {
  constexpr std::int64_t R = DirectTile<T>::kRows, kCols = BlockGemmTile<T>::kCols, kMaxChunk = 1024;
  // Positions a chunk: 1024 where each thread sums its own copy (its tiles' sums then pass through
  // cache half as often), 512 where the threads share the tiles (the chunk's dy rows for every
  // tile and x panel then fit L2 together). Measured on ResNet-18's 3x3 layers, float: 64 and 128
  // channels 1.05-1.08x faster at 1024 than 512; 256 and 512 channels (tiles split) 1.13-1.24x
  // faster at 512.
  const std::int64_t chunk = copies > 1 ? kMaxChunk : kMaxChunk / 2;
  const std::int64_t plane = std::int64_t(x_offset.size()), positions = images * plane;
  const std::int64_t row_tiles = (og + R - 1) / R, panels = k / kCols, units = groups * row_tiles * panels;
  const std::int64_t size = groups * og * k;
  // Positions split: copy t sums positions [t share, (t + 1) share); tiles split: one range.
  const std::int64_t share = (positions + copies - 1) / copies;
  threads = copies > 1 ? copies : int(std::min<std::int64_t>(threads, units));
  WEFT_PRAGMA_OMP(omp parallel num_threads(threads) if (threads > 1))
  {
#if defined(_OPENMP)
    const int me = omp_get_thread_num();
#else
    const int me = 0;
#endif
    const std::int64_t p_begin = copies > 1 ? std::min(positions, me * share) : 0;
    const std::int64_t p_end = copies > 1 ? std::min(positions, p_begin + share) : positions;
    T* sum = sums + (copies > 1 ? me * size : 0);
    if (overwrite && p_begin == p_end) std::fill(sum, sum + size, T(0));  // a copy with no positions
    alignas(64) T tile[R * kCols];
    const T* rows[R];
    // the chunk's offsets, its images' included; those of the positions reaching one tap
    std::int64_t chunk_x[kMaxChunk], chunk_dy[kMaxChunk], tap_x[kMaxChunk], tap_dy[kMaxChunk];
    std::uint64_t chunk_taps[kMaxChunk];
    for (std::int64_t c0 = p_begin; c0 < p_end; c0 += chunk) {
      const std::int64_t count = std::min(chunk, p_end - c0);
      for (std::int64_t i = 0, n = c0 / plane, q = c0 - n * plane; i < count; ++i) {
        chunk_x[i] = n * x_image + x_offset[std::size_t(q)];
        chunk_dy[i] = n * dy_image + dy_offset[std::size_t(q)];
        chunk_taps[i] = position_taps[std::size_t(q)];
        if (++q == plane) q = 0, ++n;
      }
      std::int64_t listed_tap = -1, reached = 0;
      for (std::int64_t u = 0; u < units; ++u) {
        if (copies == 1 && u % threads != me) continue;  // tiles split: a fixed share each
        // the row tiles innermost: one panel's chunk of x (chunk x kCols) stays in L2 across them
        const std::int64_t g = u / (row_tiles * panels), panel = u / row_tiles % panels, t = u % row_tiles;
        const std::int64_t o0 = t * R, live = std::min(R, og - o0);
        const std::int64_t tap = column_tap[std::size_t(panel * kCols)];
        if (tap != listed_tap) {  // the positions whose window reaches this tap in the data
          listed_tap = tap, reached = 0;
          for (std::int64_t i = 0; i < count; ++i)
            if (tap >= 64 || (chunk_taps[i] >> tap & 1)) tap_x[reached] = chunk_x[i], tap_dy[reached++] = chunk_dy[i];
        }
        for (std::int64_t r = 0; r < R; ++r)  // rows past og repeat the last (computed, not added)
          rows[r] = dy + (g * og + o0 + std::min(r, live - 1)) * dy_channel;
        direct_weight_tile<T>(rows, tap_dy, x + g * x_group + column_offset[std::size_t(panel * kCols)], tap_x,
                              reached, tile, kCols, true);
        T* out = sum + (g * og + o0) * k;
        const std::int64_t* to = sum_column.data() + panel * kCols;
        if (overwrite && c0 == p_begin)
          for (std::int64_t r = 0; r < live; ++r)
            for (std::int64_t j = 0; j < kCols; ++j) out[r * k + to[j]] = tile[r * kCols + j];
        else
          for (std::int64_t r = 0; r < live; ++r)
            for (std::int64_t j = 0; j < kCols; ++j) out[r * k + to[j]] += tile[r * kCols + j];
      }
    }
  }
}

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)

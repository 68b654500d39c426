// SPDX-License-Identifier: MIT
/// @file Winograd's F(2x2, 3x3) for float 3x3 convolutions of stride 1: each 2 x 2 block of outputs from 16 products a channel pair instead of 36, on the direct product's register tile.
///
/// One dimension, F(2, 3): outputs y0 = d0 g0 + d1 g1 + d2 g2, y1 = d1 g0 + d2 g1 + d3 g2 of the
/// inputs d0..d3 and the taps g0..g2 are
///   m0 = (d0 - d2) g0,  m1 = (d1 + d2) (g0 + g1 + g2) / 2,  m2 = (d2 - d1) (g0 - g1 + g2) / 2,
///   m3 = (d1 - d3) g2,  y0 = m0 + m1 + m2,  y1 = m1 - m2 - m3,
/// that is y = A^T [(G g) . (B^T d)] with B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1],
/// G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1], A^T = [1 1 1 0; 0 1 -1 -1]. Nested over rows and
/// columns, a 4 x 4 input tile d and a 3 x 3 kernel g give the 2 x 2 outputs
///   Y = A^T [U . V] A,  U = G g G^T,  V = B^T d B  (. elementwise, 16 entries xi = 4 i + j),
/// and over channels, since A^T (.) A is linear: Y[o] = A^T [sum_c U[o, c] . V[c]] A. So the
/// convolution becomes 16 independent products M_xi = V_xi U_xi (rows = tiles, k = input
/// channels, columns = output channels), with 16 multiplies per 4 outputs and channel pair where
/// the direct product has 36: 2.25x fewer flops; the transforms are additions, O(C + O) a tile
/// against the products' O(C O).
///
/// Error: every stage is a short sum of terms whose coefficients are 1 or 1/2 (U computed in
/// double and rounded once), so |Y - y| <= (C + 10) u |A^T| [sum_c |U| . |B^T| |d| |B|] |A|, the
/// same order as the direct sum's k u sum |d g| times the transforms' growth (|B^T| |d| |B| holds
/// up to 4 |d| an entry): F(2x2, 3x3) is the Winograd variant whose error stays near the direct
/// sum's (larger tiles, F(4x4, 3x3) with points +-2 and +-1/2, amplify rounding errors by an
/// order of magnitude or more in float).
///
/// The loops, per task: a block of whole tile rows (so its outputs are one run of positions
/// (n, i, j), as the direct product's finished blocks): the block's input tiles transformed into
/// V (16 x tiles x C, about 1 MiB, in L2); then per 64 output channels (one weight panel) and per
/// xi, the products of all the block's tiles into M (U_xi's panel stays in L2 while the tiles
/// pass over it), and M's output transform into the block's positions; the block goes to
/// `finish` as the direct product's do.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "weft/backend/cpu/conv_direct.hpp"

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu {

/// V = B^T d B for lanes of channels: d(i, j) = load(at + i row + j col), each V_xi handed to
/// store(xi, value). P is a packet (simd::Vec) or a float (the channels past the last whole packet).
template <class P, class Load, class Store>
inline __attribute__((always_inline)) void winograd_input_tile(const float* at, std::int64_t row, std::int64_t col,
                                                               const Load& load, const Store& store) {
  P t[4][4];
  for (int j = 0; j < 4; ++j) {  // B^T d, down each column
    const P d0 = load(at + j * col), d1 = load(at + row + j * col), d2 = load(at + 2 * row + j * col),
            d3 = load(at + 3 * row + j * col);
    t[0][j] = d0 - d2, t[1][j] = d1 + d2, t[2][j] = d2 - d1, t[3][j] = d1 - d3;
  }
  for (int i = 0; i < 4; ++i) {  // (B^T d) B, along each row
    store(4 * i + 0, t[i][0] - t[i][2]);
    store(4 * i + 1, t[i][1] + t[i][2]);
    store(4 * i + 2, t[i][2] - t[i][1]);
    store(4 * i + 3, t[i][1] - t[i][3]);
  }
}

/// Y = A^T M A for a packet of output channels: m(xi) the 16 sums, Y(a, b) handed to put.
template <class P, class Get, class Put>
inline __attribute__((always_inline)) void winograd_output_tile(const Get& m, const Put& put) {
  P s[2][4];
  for (int j = 0; j < 4; ++j) {  // A^T M, down each column
    const P m1 = m(4 + j), m2 = m(8 + j);
    s[0][j] = m(j) + m1 + m2;
    s[1][j] = m1 - m2 - m(12 + j);
  }
  for (int a = 0; a < 2; ++a) {  // (A^T M) A
    put(a, 0, s[a][0] + s[a][1] + s[a][2]);
    put(a, 1, s[a][1] - s[a][2] - s[a][3]);
  }
}

/// The stride-1 3 x 3 correlation of a padded channels-last source with k channels, as F(2x2, 3x3):
/// out(n, i, j, o) = sum over c, kh, kw of src(n, i + kh, j + kw, c) w(o, c, kh, kw) for i <
/// out_h, j < out_w, src(n, h, w, c) at src[n image + h row + w col + c] holding every row and
/// column the tiles reach:
/// 2 ceil(out_h / 2) + 2 rows and as many columns an image. `u` holds the transformed weight
/// (U = G g G^T of each kernel: winograd_weights) as 16 groups of k x m DirectKernel<float> panels,
/// U_xi(c, o), the groups packed_panels_size(k, m) apart. finish(0, i0, i1, 0, m, block, ld)
/// receives runs of at most 256 output positions (n, i, j) of the batch, block(i - i0, o) at
/// block[(i - i0) ld + o], as the direct product hands out its blocks.
template <class Finish>
void winograd_product(const float* src, std::int64_t image, std::int64_t row, std::int64_t col, std::int64_t batch, std::int64_t out_h, std::int64_t out_w,
                      std::int64_t k, std::int64_t m, const float* u, int threads, const Finish& finish) {
  using Tile = BlockGemmTile<float>;
  constexpr int R = DirectTile<float>::kRows, NV = Tile::kVecs, W = Tile::kLanes;
  constexpr std::int64_t kCols = Tile::kCols, kMaxRun = 256;
  using V = simd::Vec<float, W>;
  if (batch == 0 || out_h == 0 || out_w == 0 || m == 0) return;
  const std::int64_t th = (out_h + 1) / 2, tw = (out_w + 1) / 2, tile_rows = batch * th, plane = out_h * out_w;
  // Tiles a block (whole tile rows): V (16 x tiles x k floats) up to 1 MiB and at most 96 tiles.
  // Each block reads the whole transformed weight once, doing 2 x tiles flops a byte of it (U of
  // 512 x 512 channels is 16 MiB), and each panel's U_xi (k x 64) stays in L2 while the block's
  // tiles pass over it. At least as many blocks as threads where the tile rows allow.
  const std::int64_t wanted = std::clamp<std::int64_t>(16384 / k, R, 16 * R);
  const std::int64_t block_rows =
      std::max<std::int64_t>(1, std::min(wanted / tw, (tile_rows + threads - 1) / std::int64_t(threads)));
  const std::int64_t blocks = (tile_rows + block_rows - 1) / block_rows;
  const std::int64_t max_tiles = block_rows * tw, padded_tiles = (max_tiles + R - 1) / R * R;
  const std::int64_t panels = (m + kCols - 1) / kCols, group = packed_panels_size<GemmFmaKernel<float>>(k, m);
  const std::int64_t panel = DirectKernel<float>::panel_size(k);
  // Few blocks (a small batch's last layers: wide weights, few tiles): the panels split into
  // groups too, two tasks a thread, so that each thread reads only its own panels of the weight.
  std::int64_t group_panels = panels;
  if (blocks < 2 * threads) group_panels = (panels + (2 * threads + blocks - 1) / blocks - 1) / ((2 * threads + blocks - 1) / blocks);
  const std::int64_t panel_groups = (panels + group_panels - 1) / group_panels, tasks = blocks * panel_groups;
  const std::int64_t ldo = group_panels * kCols;
  const std::int64_t v_size = 16 * padded_tiles * k, m_size = 16 * padded_tiles * kCols;
  const std::int64_t out_size = 2 * block_rows * out_w * ldo;
  threads = int(std::min<std::int64_t>(threads, tasks));
  WEFT_PRAGMA_OMP(omp parallel num_threads(threads) if (threads > 1))
  {
    const PackedGemmScratch<float> scratch(0, v_size + m_size + out_size);
    float* const v = scratch.get();
    float* const sums = v + v_size;
    float* const out = sums + m_size;
    const DirectRun run{0, k};
    WEFT_PRAGMA_OMP(omp for schedule(dynamic, 1))
    for (std::int64_t task = 0; task < tasks; ++task) {
      const std::int64_t b = task / panel_groups, p0 = task % panel_groups * group_panels;
      const std::int64_t p1 = std::min(panels, p0 + group_panels);
      const std::int64_t r0 = b * block_rows, r1 = std::min(tile_rows, r0 + block_rows), tiles = (r1 - r0) * tw;
      // the block's outputs: positions of tile row r0's first output row to past r1 - 1's last
      const std::int64_t n0 = r0 / th, n1 = (r1 - 1) / th;
      const std::int64_t i0 = n0 * plane + 2 * (r0 - n0 * th) * out_w;
      const std::int64_t i1 = n1 * plane + std::min(out_h, 2 * (r1 - 1 - n1 * th) + 2) * out_w;
      // V_xi(t, c) at v + (xi padded_tiles + t) k
      for (std::int64_t t = 0; t < tiles; ++t) {
        const std::int64_t r = r0 + t / tw, n = r / th;
        const float* at = src + n * image + 2 * (r - n * th) * row + 2 * (t % tw) * col;
        float* to = v + t * k;
        std::int64_t c = 0;
        for (; c + W <= k; c += W)
          winograd_input_tile<V>(
              at + c, row, col, [](const float* p) { return V::load(p); },
              [&](int xi, V x) { x.store(to + xi * padded_tiles * k + c); });
        for (; c < k; ++c)
          winograd_input_tile<float>(
              at + c, row, col, [](const float* p) { return *p; },
              [&](int xi, float x) { to[xi * padded_tiles * k + c] = x; });
      }
      for (std::int64_t p = p0; p < p1; ++p) {
        // M_xi(t, o) = sum_c V_xi(t, c) U_xi(c, o) at sums + (xi padded_tiles + t) kCols: U_xi's
        // panel in L2 while the block's tiles pass over it
        for (int xi = 0; xi < 16; ++xi)
          for (std::int64_t t0 = 0; t0 < tiles; t0 += R) {
            const std::int64_t live = std::min<std::int64_t>(R, tiles - t0);
            const float* rows[R];
            for (int r = 0; r < R; ++r) rows[r] = v + (xi * padded_tiles + t0 + std::min<std::int64_t>(r, live - 1)) * k;
            direct_tile<float>(rows, &run, 1, u + xi * group + p * panel, sums + (xi * padded_tiles + t0) * kCols,
                               kCols, true);
          }
        for (std::int64_t t = 0; t < tiles; ++t) {
          const std::int64_t tr = r0 + t / tw, n = tr / th, oi = 2 * (tr - n * th), oj = 2 * (t % tw);
          float* const y = out + (n * plane + oi * out_w + oj - i0) * ldo + (p - p0) * kCols;
          const bool down = oi + 1 < out_h, right = oj + 1 < out_w;
          for (int q = 0; q < NV; ++q)
            winograd_output_tile<V>(
                [&](int xi) { return V::load(sums + (xi * padded_tiles + t) * kCols + q * W); },
                [&](int a, int b2, V value) {
                  if ((a == 0 || down) && (b2 == 0 || right)) value.store(y + (a * out_w + b2) * ldo + q * W);
                });
        }
      }
      for (std::int64_t s = i0; s < i1; s += kMaxRun)
        finish(std::int64_t(0), s, std::min(i1, s + kMaxRun), p0 * kCols, std::min(m, p1 * kCols),
               static_cast<const float*>(out + (s - i0) * ldo), ldo);
    }
  }
}

/// The weight gradient of winograd_product's correlation, as F(2x2, 3x3): with Y = A^T [U . V] A
/// a tile's outputs, dL/dU = Yhat . V where Yhat = A dY A^T (dY the tile's 2 x 2 output gradients,
/// zero past the edges), so over the tiles
///   dU_xi(o, c) = sum over t of Yhat_xi(t, o) V_xi(t, c),  dw(o, c) = G^T dU(o, c) G:
/// 16 products of k = tiles, 2.25x fewer flops than the direct weight gradient's. src as
/// winograd_product's (k channels, a multiple of the tile's kCols); dy(n, i, j, o) at dy[n
/// dy_image + i dy_row + j dy_col + o] (channel stride 1) with a zero row and column past odd
/// out_h, out_w. Adds the 16 m x k sums dU_xi(o, c) (at sums + (xi m + o) k + c) of this batch
/// into the array `sums` + t 16 m k of each thread t (`threads` arrays; the caller adds them and
/// transforms: winograd_weight_gradient).
inline void winograd_weight_product(const float* src, std::int64_t image, std::int64_t row, std::int64_t col,
                                    const float* dy, std::int64_t dy_image, std::int64_t dy_row, std::int64_t dy_col,
                                    std::int64_t batch, std::int64_t out_h, std::int64_t out_w, std::int64_t k,
                                    std::int64_t m, int threads, float* sums) {
  using Tile = BlockGemmTile<float>;
  constexpr int R = DirectTile<float>::kRows, W = Tile::kLanes;
  constexpr std::int64_t kCols = Tile::kCols;
  using V = simd::Vec<float, W>;
  const std::int64_t th = (out_h + 1) / 2, tw = (out_w + 1) / 2, tile_rows = batch * th;
  // tiles a block: V and Yhat (16 x tiles x (k + m) floats) about 1 MiB, whole tile rows
  const std::int64_t wanted = std::clamp<std::int64_t>(16384 / (k + m), R, 64 * R);
  const std::int64_t block_rows = std::max<std::int64_t>(1, wanted / tw), blocks = (tile_rows + block_rows - 1) / block_rows;
  const std::int64_t max_tiles = block_rows * tw, size = 16 * m * k;
  threads = int(std::min<std::int64_t>(threads, blocks));
  WEFT_PRAGMA_OMP(omp parallel num_threads(threads) if (threads > 1))
  {
#if defined(_OPENMP)
    float* const sum = sums + std::int64_t(omp_get_thread_num()) * size;
#else
    float* const sum = sums;
#endif
    const PackedGemmScratch<float> scratch(0, 16 * max_tiles * (k + m));
    float* const v = scratch.get();
    float* const yhat = v + 16 * max_tiles * k;
    std::vector<std::int64_t> v_offset(static_cast<std::size_t>(max_tiles)), y_offset(static_cast<std::size_t>(max_tiles));
    alignas(64) float tile[R * kCols];
    WEFT_PRAGMA_OMP(omp for schedule(dynamic, 1))
    for (std::int64_t b = 0; b < blocks; ++b) {
      const std::int64_t r0 = b * block_rows, r1 = std::min(tile_rows, r0 + block_rows), tiles = (r1 - r0) * tw;
      for (std::int64_t t = 0; t < tiles; ++t) {
        const std::int64_t r = r0 + t / tw, n = r / th, i = 2 * (r - n * th), j = 2 * (t % tw);
        const float* at = src + n * image + i * row + j * col;
        float* to = v + t * k;
        for (std::int64_t c = 0; c < k; c += W)  // k: a multiple of kCols
          winograd_input_tile<V>(
              at + c, row, col, [](const float* p) { return V::load(p); },
              [&](int xi, V x) { x.store(to + xi * max_tiles * k + c); });
        // Yhat = A dY A^T: rows (y0, y0 + y1, y0 - y1, -y1) of dY, then the same along each row
        const float* g = dy + n * dy_image + i * dy_row + j * dy_col;
        float* gy = yhat + t * m;
        auto put = [&](std::int64_t o, auto y00, auto y01, auto y10, auto y11, auto store) {
          decltype(y00) e[4][2] = {{y00, y01}, {y00 + y10, y01 + y11}, {y00 - y10, y01 - y11}, {-y10, -y11}};
          for (int a = 0; a < 4; ++a) {
            store(4 * a + 0, o, e[a][0]);
            store(4 * a + 1, o, e[a][0] + e[a][1]);
            store(4 * a + 2, o, e[a][0] - e[a][1]);
            store(4 * a + 3, o, -e[a][1]);
          }
        };
        std::int64_t o = 0;
        for (; o + W <= m; o += W)
          put(o, V::load(g + o), V::load(g + dy_col + o), V::load(g + dy_row + o), V::load(g + dy_row + dy_col + o),
              [&](int xi, std::int64_t at_o, V x) { x.store(gy + xi * max_tiles * m + at_o); });
        for (; o < m; ++o)
          put(o, g[o], g[dy_col + o], g[dy_row + o], g[dy_row + dy_col + o],
              [&](int xi, std::int64_t at_o, float x) { gy[xi * max_tiles * m + at_o] = x; });
        v_offset[std::size_t(t)] = t * k, y_offset[std::size_t(t)] = t * m;
      }
      const float* rows[R];
      for (int xi = 0; xi < 16; ++xi)
        for (std::int64_t o0 = 0; o0 < m; o0 += R) {
          const std::int64_t live = std::min<std::int64_t>(R, m - o0);
          for (int r = 0; r < R; ++r)  // rows past m repeat the last (computed, not added)
            rows[r] = yhat + xi * max_tiles * m + o0 + std::min<std::int64_t>(r, live - 1);
          for (std::int64_t c0 = 0; c0 < k; c0 += kCols) {
            direct_weight_tile<float>(rows, y_offset.data(), v + xi * max_tiles * k + c0, v_offset.data(), tiles, tile,
                                      kCols, true);
            float* out = sum + (xi * m + o0) * k + c0;
            for (std::int64_t r = 0; r < live; ++r)
              for (std::int64_t c = 0; c < kCols; ++c) out[r * k + c] += tile[r * kCols + c];
          }
        }
    }
  }
}

/// dw(o, c) = G^T dU(o, c) G (3 x 3, row-major at dw + (o k + c) 9) from the 16 m x k sums dU_xi
/// of `copies` arrays (winograd_weight_product's), summed and transformed in double, rounded once.
inline void winograd_weight_gradient(const float* sums, int copies, std::int64_t k, std::int64_t m, float* dw) {
  const std::int64_t size = 16 * m * k;
  for (std::int64_t o = 0; o < m; ++o)
    for (std::int64_t c = 0; c < k; ++c) {
      double d[4][4];
      for (int xi = 0; xi < 16; ++xi) {
        double total = 0;
        for (int t = 0; t < copies; ++t) total += sums[t * size + (xi * m + o) * k + c];
        d[xi / 4][xi % 4] = total;
      }
      double q[3][4];  // G^T dU: rows of G^T = (1, 1/2, 1/2, 0), (0, 1/2, -1/2, 0), (0, 1/2, 1/2, 1)
      for (int j = 0; j < 4; ++j) {
        q[0][j] = d[0][j] + (d[1][j] + d[2][j]) / 2;
        q[1][j] = (d[1][j] - d[2][j]) / 2;
        q[2][j] = (d[1][j] + d[2][j]) / 2 + d[3][j];
      }
      float* out = dw + (o * k + c) * 9;
      for (int i = 0; i < 3; ++i) {  // (G^T dU) G
        out[3 * i + 0] = float(q[i][0] + (q[i][1] + q[i][2]) / 2);
        out[3 * i + 1] = float((q[i][1] - q[i][2]) / 2);
        out[3 * i + 2] = float((q[i][1] + q[i][2]) / 2 + q[i][3]);
      }
    }
}

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)

// SPDX-License-Identifier: MIT
/// @file The flash attention backend on the CPU: FlashAttention-2's forward and backward passes over cache-sized blocks, OpenMP over (batch, head, block).
///
/// Forward (Dao, FlashAttention-2, Algorithm 1), for one block of kBlock query rows:
///   for each block of kBlock keys:  s = (q k^T) c (+ bias log2 e),  c = scale log2 e
///     m' = max(m, rowmax s);  p = 2^(s - m');  l = l 2^(m - m') + rowsum p;  o = o 2^(m - m') + p v
///   out = o / l;  lse = (m + log2 l) ln 2, in double (see flash_backward_cpu).
/// Scores live in log2 units, so each weight costs one exp2 (log2 e rides on the scale);
/// normalization is deferred to the end; blocks entirely above the causal diagonal are skipped.
/// Memory: O(L E) (the packed K and V plus per-thread blocks), never O(L S).
///
/// Backward (Algorithm 2), for one block of keys of one key/value head, over every query head
/// of its group and every query block that sees it: p = 2^(s2 - lse log2 e) recomputed,
///   dV += p^T dO;  dP = dO V^T;  dS = p (dP - D), D = rowsum(dO out);  dK += dS^T Q scale;
///   dQ += dS K scale (dQ is shared by the key blocks: one accumulator per thread, summed at the end).
/// A weight above kDominantWeight gets dP - D = dO (v - out) in double instead (see dominant_ds).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "weft/backend/cpu/gemm/block.hpp"
#include "weft/backend/cpu/line_aligned.hpp"
#include "weft/backend/cpu/pointwise.hpp"
#include "weft/backend/attention/dropout.hpp"
#include "weft/backend/attention/problem.hpp"

#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu::flash {
inline namespace WEFT_BACKEND_ABI {


/// Block sizes of the CPU flash kernels for compute type Acc: square blocks of kBlock query rows
/// by kBlock keys, a multiple of block_gemm_panels' tile rows and columns (the backward pass also uses
/// key blocks as GEMM rows): 128 with AVX-512's 64-float tile columns, else 96. 128 x 128 floats
/// are 64 KiB of scores, L2-resident with the packed q, k and v blocks.
template <class Acc>
struct FlashTiles {
  using Tile = cpu::BlockGemmTile<Acc>;
  static constexpr std::int64_t kBlock = simd::kBytes >= 64 ? 128 : 96;
  static_assert(kBlock % Tile::kRows == 0 && kBlock % Tile::kCols == 0, "flash block must be whole GEMM tiles");
  static constexpr std::int64_t pad(std::int64_t n) { return (n + Tile::kCols - 1) / Tile::kCols * Tile::kCols; }
};

inline constexpr double kLog2e = 1.4426950408889634074;

/// dst[r ld + c] = mul src(bh, r0 + r, c) for r < rows, c < cols; zeros elsewhere in rows_pad x ld.
template <class Acc, class T>
void pack_rows(const SdpaRows<T>& src, std::int64_t bh, std::int64_t r0, std::int64_t rows, std::int64_t cols,
               Acc mul, Acc* dst, std::int64_t ld, std::int64_t rows_pad) {
  const std::int64_t cs = src.col_stride;
  for (std::int64_t r = 0; r < rows_pad; ++r) {
    Acc* d = dst + r * ld;
    std::int64_t c = 0;
    if (r < rows) {
      const T* p = src.row(bh, r0 + r);
      if (cs == 1) {  // the usual layout: a loop the compiler vectorizes
        for (; c < cols; ++c) d[c] = Acc(math_t<T>(p[c])) * mul;
      } else {
        for (; c < cols; ++c) d[c] = Acc(math_t<T>(p[c * cs])) * mul;
      }
    }
    for (; c < ld; ++c) d[c] = Acc(0);
  }
}

/// src(bh, r0 + r, c) for r < rows, c < cols, transposed into column panels of depth cols
/// (cpu::block_gemm_panels' B): B(c, r) = src(bh, r0 + r, c), zeros for r in [rows, n_pad).
template <class Acc, class T>
void pack_transposed_panels(const SdpaRows<T>& src, std::int64_t bh, std::int64_t r0, std::int64_t rows,
                            std::int64_t cols, Acc* dst, std::int64_t n_pad) {
  constexpr std::int64_t NC = cpu::BlockGemmTile<Acc>::kCols;
  for (std::int64_t p0 = 0; p0 < n_pad; p0 += NC) {
    Acc* panel = dst + p0 * cols;  // cols x NC
    for (std::int64_t r = p0; r < p0 + NC; ++r) {
      if (r < rows) {
        const T* p = src.row(bh, r0 + r);
        for (std::int64_t c = 0; c < cols; ++c) panel[c * NC + r - p0] = Acc(math_t<T>(p[c * src.col_stride]));
      } else {
        for (std::int64_t c = 0; c < cols; ++c) panel[c * NC + r - p0] = Acc(0);
      }
    }
  }
}

/// src(bh, r0 + r, c) for r < rows, c < cols into column panels of depth rows_pad
/// (cpu::block_gemm_panels' B): B(r, c) = src(bh, r0 + r, c), zeros elsewhere in rows_pad x n_pad.
template <class Acc, class T>
void pack_rows_panels(const SdpaRows<T>& src, std::int64_t bh, std::int64_t r0, std::int64_t rows, std::int64_t cols,
                      Acc* dst, std::int64_t rows_pad, std::int64_t n_pad) {
  constexpr std::int64_t NC = cpu::BlockGemmTile<Acc>::kCols;
  const std::int64_t cs = src.col_stride;
  for (std::int64_t p0 = 0; p0 < n_pad; p0 += NC) {
    const std::int64_t n = std::clamp<std::int64_t>(cols - p0, 0, NC);  // source columns in this panel
    for (std::int64_t r = 0; r < rows_pad; ++r) {
      Acc* d = dst + (p0 * rows_pad + r * NC);
      std::int64_t c = 0;
      if (r < rows) {
        const T* p = src.row(bh, r0 + r) + p0 * cs;
        if (cs == 1) {  // the usual layout: a loop the compiler vectorizes
          for (; c < n; ++c) d[c] = Acc(math_t<T>(p[c]));
        } else {
          for (; c < n; ++c) d[c] = Acc(math_t<T>(p[c * cs]));
        }
      }
      for (; c < NC; ++c) d[c] = Acc(0);
    }
  }
}

/// The part of the attention problem both passes share: shapes, operands, mask, dropout.
template <class T>
struct FlashProblem {
  using Acc = math_t<T>;
  using Tiles = FlashTiles<Acc>;
  static constexpr std::int64_t kB = Tiles::kBlock;

  const SdpaShape& s;
  const SdpaRows<T>& q;
  const SdpaRows<T>& k;
  const SdpaRows<T>& v;
  const SdpaRows<Acc>& bias;  // data == nullptr without a mask
  SdpaDropout dropout{s.dropout_p, s.seed};
  std::int64_t key_blocks = (s.S + kB - 1) / kB;
  std::int64_t query_blocks = (s.L + kB - 1) / kB;
  std::int64_t Ep = Tiles::pad(s.E), Evp = Tiles::pad(s.Ev);

  /// Scores in log2 units: s2 = (q k) c + bias_unit bias, c = scale log2 e rounded to Acc. Every
  /// conversion back uses that rounded c (a natural score is s2 to_natural), so c's rounding
  /// cancels instead of scaling every lse by (1 + 6e-8) (1e-6 at |lse| ~ 15 in float).
  Acc c() const { return Acc(s.scale * kLog2e); }
  Acc bias_unit() const { return Acc(double(c()) / s.scale); }
  double to_natural() const { return s.scale / double(c()); }

  /// Flattened key/value head of query head bh = b Hq + hq.
  std::int64_t kv_head(std::int64_t bh) const { return bh / s.Hq * s.H + bh % s.Hq / s.group; }

  /// Key blocks [0, end) that query rows [i0, i0 + rows) see.
  std::int64_t key_block_end(std::int64_t i0, std::int64_t rows) const {
    if (!s.causal) return key_blocks;
    const std::int64_t last = i0 + rows - 1 + s.causal_offset;  // last key the last row sees
    return last < 0 ? 0 : std::min(key_blocks, last / kB + 1);
  }
  /// First query block that sees key block kb.
  std::int64_t query_block_begin(std::int64_t kb) const {
    if (!s.causal) return 0;
    const std::int64_t first = kb * kB - s.causal_offset;  // first query row that sees key kb kB
    return first <= 0 ? 0 : std::min(query_blocks, first / kB);
  }
  /// Query blocks of every head in its group that see the key block of backward unit u (key/value
  /// head u / key_blocks, key block u % key_blocks): the unit's work.
  std::int64_t queries_seeing(std::int64_t u) const { return s.group * (query_blocks - query_block_begin(u % key_blocks)); }

  /// Row r (query i) of a kB-wide score block for keys [j0, j0 + kB): adds the mask times
  /// `unit` (log2 e for scores in log2 units, 1 in natural units) and sets keys the query does
  /// not see (past S, above the diagonal) to -inf.
  void mask_row(Acc* row, std::int64_t bh, std::int64_t i, std::int64_t j0, Acc unit) const {
    const std::int64_t valid = std::min(kB, s.S - j0);
    const std::int64_t seen = s.causal ? std::clamp<std::int64_t>(i + s.causal_offset - j0 + 1, 0, valid) : valid;
    if (bias.data) {
      const Acc* b = bias.row(bh, i) + j0 * bias.col_stride;
      for (std::int64_t j = 0; j < seen; ++j) row[j] += b[j * bias.col_stride] * unit;
    }
    for (std::int64_t j = seen; j < kB; ++j) row[j] = -std::numeric_limits<Acc>::infinity();
  }
  /// Whether a score block needs mask_row: a mask, keys past S, or keys above query i0's diagonal.
  bool needs_mask(std::int64_t i0, std::int64_t j0) const {
    return bias.data || j0 + kB > s.S || (s.causal && j0 + kB - 1 > i0 + s.causal_offset);
  }
  /// Multiplies p's kB weights of row (bh, i), keys from j0, by their dropout factors.
  void drop_row(Acc* p, Acc* factors, std::int64_t bh, std::int64_t i, std::int64_t j0) const {
    const std::int64_t valid = std::min(kB, s.S - j0);
    dropout.factors(std::uint64_t((bh * s.L + i) * s.S + j0), valid, factors);
    for (std::int64_t j = 0; j < valid; ++j) p[j] *= factors[j];
  }

  /// K^T (E x kB) of every key block, then V (kB x Evp) of every key block, per key/value head,
  /// each in block_gemm_panels' column panels (a 128-float row stride thrashed L1 at E = 128).
  cpu::LineVector<Acc> pack_kv(bool with_v) const {
    const std::int64_t kv_blocks = s.batches * s.H * key_blocks;
    const std::int64_t kt_size = s.E * kB, v_size = kB * Evp;
    cpu::LineVector<Acc> packed(std::size_t(kv_blocks * (kt_size + (with_v ? v_size : 0))));
    Acc* kt = packed.data();
    Acc* vp = kt + kv_blocks * kt_size;
    WEFT_PRAGMA_OMP(omp parallel for schedule(static) num_threads(cpu::threads_for(kv_blocks * kt_size)))
    for (std::int64_t u = 0; u < kv_blocks; ++u) {
      const std::int64_t bhk = u / key_blocks, j0 = u % key_blocks * kB, rows = std::min(kB, s.S - j0);
      pack_transposed_panels(k, bhk, j0, rows, s.E, kt + u * kt_size, kB);
      if (with_v) pack_rows_panels(v, bhk, j0, rows, s.Ev, vp + u * v_size, kB, Evp);
    }
    return packed;
  }
};

/// This OpenMP thread's slice of `size` elements of a buffer of one slice per thread (dq's
/// accumulators: the buffer itself without OpenMP).
template <class A>
A* thread_slice(cpu::LineVector<A>& buffer, std::int64_t size) {
#if defined(_OPENMP)
  return buffer.data() + omp_get_thread_num() * size;
#else
  (void)size;
  return buffer.data();
#endif
}

/// The units [0, units) this OpenMP thread runs, dealt before any runs: longest first (by `cost`),
/// each to the thread with the least work so far (ties to the lower thread), a thread's units in
/// increasing order. Every thread computes the same deal and keeps its own units (no barrier; a
/// few hundred units sort in microseconds). The deal depends only on the costs and the team's
/// size, so per-thread accumulators summed in thread order (sum_thread_slices) give the same bits
/// on every run; a dynamic schedule grouped the backward's key blocks differently from run to
/// run, and dq differed in its last bits between two runs of one call.
template <class Cost>
std::vector<std::int64_t> dealt_units(std::int64_t units, Cost cost) {
#if defined(_OPENMP)
  const int team = omp_get_num_threads(), me = omp_get_thread_num();
#else
  const int team = 1, me = 0;
#endif
  std::vector<std::int64_t> order(static_cast<std::size_t>(units)), load(static_cast<std::size_t>(team), 0), mine;
  std::iota(order.begin(), order.end(), std::int64_t(0));
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return cost(a) > cost(b); });
  for (const std::int64_t u : order) {
    const auto least = std::min_element(load.begin(), load.end());
    *least += cost(u) + 1;  // + 1: units without work still spread
    if (least - load.begin() == me) mine.push_back(u);
  }
  std::sort(mine.begin(), mine.end());
  return mine;
}

/// dq (batch Hq, L, E, contiguous) = scale sum_t slice_t[at(bh, i, e)] over the `threads` slices
/// of `slice` elements each (thread_slice), summed in thread order: with the units dealt by
/// dealt_units, the same bits on every run.
template <class A, class T, class At>
void sum_thread_slices(const cpu::LineVector<A>& acc, int threads, std::int64_t slice, std::int64_t heads,
                       std::int64_t L, std::int64_t E, A scale, At at, T* dq) {
  WEFT_PRAGMA_OMP(omp parallel for schedule(static) num_threads(weft::detail::cpu::threads_for(heads * L * E)))
  for (std::int64_t hr = 0; hr < heads * L; ++hr) {
    const std::int64_t bh = hr / L, i = hr % L;
    for (std::int64_t e = 0; e < E; ++e) {
      A sum = 0;
      for (int t = 0; t < threads; ++t) sum += acc[std::size_t(t * slice + at(bh, i, e))];
      dq[hr * E + e] = T(sum * scale);
    }
  }
}

/// Vectorized passes over one kB-wide row of scores.
template <class Acc>
struct FlashRow {
  static constexpr int W = simd::native_lanes<Acc>;
  using V = simd::Vec<Acc, W>;

  /// 2^x for a weight's exponent x = s - m <= 0 (simd::exp2_nonpositive: the softmax's hot loop).
  static V exp2_weight(V x) { return simd::exp2_nonpositive(x); }

  /// max_j x_j. A NaN score is not propagated here: its weight 2^(NaN - m) is NaN, and the output with it.
  static Acc max(const Acc* x, std::int64_t n) {
    V m = V::load(x);
    for (std::int64_t j = W; j < n; j += W) {
      const V y = V::load(x + j);
      m.raw = y.raw > m.raw ? y.raw : m.raw;
    }
    return simd::reduce_max(m);
  }
  /// x *= a in place; returns max_j x_j (one pass instead of scale, then max).
  static Acc scale_max(Acc* x, std::int64_t n, Acc a) {
    const V av = V::broadcast(a);
    V m = V::broadcast(-std::numeric_limits<Acc>::infinity());
    for (std::int64_t j = 0; j < n; j += W) {
      const V y = V::load(x + j) * av;
      y.store(x + j);
      m.raw = y.raw > m.raw ? y.raw : m.raw;
    }
    return simd::reduce_max(m);
  }
  /// x = 2^(x - shift) in place; returns the sum.
  static Acc exp2_sum(Acc* x, std::int64_t n, Acc shift) {
    const V sh = V::broadcast(shift);
    V sum = V::broadcast(Acc(0));
    for (std::int64_t j = 0; j < n; j += W) {
      const V e = exp2_weight(V::load(x + j) - sh);
      e.store(x + j);
      sum = sum + e;
    }
    return simd::reduce_add(sum);
  }
  /// x = 2^((x - hi) - lo) in place.
  static void exp2_shifted(Acc* x, std::int64_t n, Acc hi, Acc lo) {
    const V h = V::broadcast(hi), l = V::broadcast(lo);
    for (std::int64_t j = 0; j < n; j += W) exp2_weight((V::load(x + j) - h) - l).store(x + j);
  }
  static void scale(Acc* x, std::int64_t n, Acc a) {
    const V av = V::broadcast(a);
    for (std::int64_t j = 0; j < n; j += W) (V::load(x + j) * av).store(x + j);
  }
  static void fill(Acc* x, std::int64_t n, Acc value) {
    for (std::int64_t j = 0; j < n; ++j) x[j] = value;
  }
};

/// The forward pass's block products in Acc on block_gemm_panels: K^T and V of every key block
/// packed once (FlashProblem::pack_kv), each query block converted to Acc by its thread. Other
/// block products (backend/cpu/attention/flash_bfmmla.hpp) provide the same members.
template <class T>
struct FloatForwardProducts {
  using Acc = math_t<T>;
  static constexpr std::int64_t kB = FlashProblem<T>::kB;
  const FlashProblem<T>& fp;
  const cpu::LineVector<Acc> packed = fp.pack_kv(true);
  const Acc* v_all = packed.data() + fp.s.batches * fp.s.H * fp.key_blocks * fp.s.E * kB;

  /// One thread's operands: its query block.
  struct Thread {
    const FloatForwardProducts& g;
    cpu::LineVector<Acc> qs = cpu::LineVector<Acc>(std::size_t(kB * std::max<std::int64_t>(g.fp.s.E, 1)));

    /// Query rows [i0, i0 + rows) of flattened head bh, the left operand of scores.
    void load_queries(std::int64_t bh, std::int64_t i0, std::int64_t rows) {
      pack_rows(g.fp.q, bh, i0, rows, g.fp.s.E, Acc(1), qs.data(), g.fp.s.E, kB);
    }
    /// sc (kB x kB, row-major) = q k^T against key block blk (flattened: bhk key_blocks + kb).
    void scores(std::int64_t blk, Acc* sc) const {
      const std::int64_t E = g.fp.s.E;
      cpu::block_gemm_panels<Acc, false>(kB, kB, E, qs.data(), E, 1, g.packed.data() + blk * E * kB, sc, kB);
    }
    /// o (kB x Evp, row-major) += p v, p (kB x kB) row-major.
    void add_pv(std::int64_t blk, const Acc* p, Acc* o) const {
      const std::int64_t Evp = g.fp.Evp;
      cpu::block_gemm_panels<Acc, true>(kB, Evp, kB, p, kB, 1, g.v_all + blk * kB * Evp, o, Evp);
    }
  };
};

/// FlashAttention-2's forward pass: out (batch Hq, L, Ev) and lse (batch Hq, L), both contiguous;
/// lse = +inf on a row that sees no key (FlashAttention's convention: the backward pass's
/// 2^(s - lse) is then 0 there). Products: the block products (FloatForwardProducts' members).
template <class T, class Products = FloatForwardProducts<T>>
void flash_forward_cpu(const FlashProblem<T>& fp, T* out, double* lse) {
  using Acc = math_t<T>;
  using Row = FlashRow<Acc>;
  constexpr std::int64_t kB = FlashProblem<T>::kB;
  const SdpaShape& s = fp.s;
  const std::int64_t heads = s.batches * s.Hq, units = heads * fp.query_blocks;
  if (units == 0) return;
  const Products products{fp};
  const std::int64_t E = s.E, Evp = fp.Evp;
  const Acc c = fp.c(), bias_unit = fp.bias_unit();
  const double to_natural = fp.to_natural();
  const Acc neg_inf = -std::numeric_limits<Acc>::infinity();
  const int threads = int(std::min<std::int64_t>(units, cpu::threads_for(units * kB * s.S * (E + s.Ev))));

  WEFT_PRAGMA_OMP(omp parallel num_threads(threads))
  {
    typename Products::Thread operands{products};
    cpu::LineVector<Acc> sc(std::size_t(kB * kB)), o(std::size_t(kB * Evp)), m(kB), l(kB), factors(kB);
    // Causal rows do less work the earlier they are: hand out blocks one at a time.
    WEFT_PRAGMA_OMP(omp for schedule(dynamic, 1))
    for (std::int64_t u = 0; u < units; ++u) {
      const std::int64_t bh = u / fp.query_blocks, i0 = u % fp.query_blocks * kB, rows = std::min(kB, s.L - i0);
      const std::int64_t bhk = fp.kv_head(bh);
      operands.load_queries(bh, i0, rows);
      Row::fill(o.data(), kB * Evp, Acc(0));
      Row::fill(m.data(), kB, neg_inf);
      Row::fill(l.data(), kB, Acc(0));
      const std::int64_t kb_end = fp.key_block_end(i0, rows);
      for (std::int64_t kb = 0; kb < kb_end; ++kb) {
        const std::int64_t j0 = kb * kB, blk = bhk * fp.key_blocks + kb;
        operands.scores(blk, sc.data());
        const bool masked = fp.needs_mask(i0, j0);
        for (std::int64_t r = 0; r < rows; ++r) {
          Acc* row = sc.data() + r * kB;
          // Scaled after the GEMM (scaling q first would round each q c once more).
          Acc row_max;
          if (masked) {
            Row::scale(row, kB, c);
            fp.mask_row(row, bh, i0 + r, j0, bias_unit);
            row_max = Row::max(row, kB);
          } else {
            row_max = Row::scale_max(row, kB, c);
          }
          const Acc m_new = std::max(m[r], row_max);
          if (m_new == neg_inf) {  // no key seen yet: weights 0 (2^(-inf - -inf) would be NaN)
            Row::fill(row, kB, Acc(0));
            continue;
          }
          // 0 when m was -inf; 1 (no call) when the max did not move, most blocks after the first few.
          const Acc alpha = m_new == m[r] ? Acc(1) : std::exp2(m[r] - m_new);
          l[r] = l[r] * alpha + Row::exp2_sum(row, kB, m_new);
          if (alpha != Acc(1)) Row::scale(o.data() + r * Evp, Evp, alpha);
          m[r] = m_new;
          if (fp.dropout.active()) fp.drop_row(row, factors.data(), bh, i0 + r, j0);
        }
        operands.add_pv(blk, sc.data(), o.data());
      }
      for (std::int64_t r = 0; r < rows; ++r) {
        const Acc inv = l[r] > 0 ? Acc(1) / l[r] : Acc(0);
        T* dst = out + (bh * s.L + i0 + r) * s.Ev;
        for (std::int64_t e = 0; e < s.Ev; ++e) dst[e] = T(o[std::size_t(r * Evp + e)] * inv);
        lse[bh * s.L + i0 + r] =
            l[r] > 0 ? double(m[r]) * to_natural + std::log(double(l[r])) : std::numeric_limits<double>::infinity();
      }
    }
  }
}

/// Weights above this get their dS from dominant_ds: at most 1 / kDominantWeight keys of a row.
inline constexpr double kDominantWeight = 0.1;

/// sum_e a_e b_e in double, for rows of n elements with strides as and bs.
template <class T>
double row_dot(const T* a, std::int64_t as, const T* b, std::int64_t bs, std::int64_t n) {
  double sum = 0;
  for (std::int64_t e = 0; e < n; ++e) sum += double(math_t<T>(a[e * as])) * double(math_t<T>(b[e * bs]));
  return sum;
}

/// dP_j keep_j - D for query i (flattened head bh) and key j, as dO . (keep v_j - out) summed in
/// double (dominant_ds says why).
template <class T>
double dominant_dp_minus_d(const FlashProblem<T>& fp, const SdpaRows<T>& out, const SdpaRows<T>& dout,
                           std::int64_t bh, std::int64_t i, std::int64_t j, double keep) {
  const T* o = out.row(bh, i);
  const T* d = dout.row(bh, i);
  const T* v = fp.v.row(fp.kv_head(bh), j);
  double sum = 0;
  for (std::int64_t e = 0; e < fp.s.Ev; ++e)
    sum += double(math_t<T>(d[e * dout.col_stride])) *
           (keep * double(math_t<T>(v[e * fp.v.col_stride])) - double(math_t<T>(o[e * out.col_stride])));
  return sum;
}

/// dS_j = p_j (dP_j keep_j - D) for the keys j of one row (query i, keys from j0) whose weight p_j
/// is above kDominantWeight, as p_j dO . (keep_j v_j - out) summed in double (keep_j = 1 without
/// dropout). Why: D = dO . out and dP_j = dO . v_j come from different float sums (a loop and the
/// block GEMM), each off by ~eps sum_e |dO_e v_e|, so their difference is off by that much, where
/// a naive run's D = sum_k p_k dP_k reuses its own dP and the common error cancels: for a row whose
/// weight p_j is near 1, dP_j - D is ~(1 - p_j) dP_j, tiny, and flash's error in it (times |k| into
/// dq, times |q| into dk) measured up to 7.5x PyTorch's float math backend's (bench/sdpa_accuracy.py).
/// dO . (v_j - out) has small terms when v_j ~ out and is exactly 0 when out = v_j (a row that sees
/// one key: the true dS is 0, as a naive run gives). Lighter weights scale dP's error down by p_j,
/// as in a naive run, and keep the GEMM's. Cost: one vector max per row and block, and at most
/// 1 / kDominantWeight dot products of Ev per row over all its key blocks.
template <class T>
void dominant_ds(const FlashProblem<T>& fp, const SdpaRows<T>& out, const SdpaRows<T>& dout, std::int64_t bh,
                 std::int64_t i, std::int64_t j0, const math_t<T>* p, math_t<T>* ds, math_t<T>* factors) {
  using Acc = math_t<T>;
  const SdpaShape& s = fp.s;
  const std::int64_t keys = std::min(FlashProblem<T>::kB, s.S - j0);
  if (fp.dropout.active()) fp.dropout.factors(std::uint64_t((bh * s.L + i) * s.S + j0), keys, factors);
  for (std::int64_t j = 0; j < keys; ++j) {
    if (!(p[j] > Acc(kDominantWeight))) continue;
    const double keep = fp.dropout.active() ? double(factors[j]) : 1.0;
    ds[j] = Acc(double(p[j]) * dominant_dp_minus_d(fp, out, dout, bh, i, j0 + j, keep));
  }
}

/// The backward pass's block products in Acc on block_gemm_panels. Q and dO of every query head
/// packed once, (batch Hq, Lp, Ep) and (batch Hq, Lp, Evp): every key block reads all of them
/// (packing them per block pair cost ~15% of the pass). Twice: in rows, the A operand of a block
/// GEMM (q k^T, dO V^T), and per query block in block_gemm_panels' column panels, its B operand
/// (dS^T Q, p^T dO): a 512-byte row stride thrashed L1 at E = 128. K^T of every key block packed
/// once (FlashProblem::pack_kv); K and V^T per key block by its thread.
template <class T>
struct FloatBackwardProducts {
  using Acc = math_t<T>;
  static constexpr std::int64_t kB = FlashProblem<T>::kB;
  const FlashProblem<T>& fp;
  const SdpaRows<T>& dout;
  const std::int64_t Lp = fp.query_blocks * kB, Ep = fp.Ep, Evp = fp.Evp;
  cpu::LineVector<Acc> q_all = cpu::LineVector<Acc>(std::size_t(fp.s.batches * fp.s.Hq * Lp * Ep)),
                   do_all = cpu::LineVector<Acc>(std::size_t(fp.s.batches * fp.s.Hq * Lp * Evp)),
                   q_panels = cpu::LineVector<Acc>(q_all.size()), do_panels = cpu::LineVector<Acc>(do_all.size());
  const cpu::LineVector<Acc> kt_all = fp.pack_kv(false);

  FloatBackwardProducts(const FlashProblem<T>& problem, const SdpaRows<T>& grad_out) : fp(problem), dout(grad_out) {
    const SdpaShape& s = fp.s;
    WEFT_PRAGMA_OMP(omp parallel for schedule(static) num_threads(cpu::threads_for(s.batches * s.Hq * Lp * (Ep + Evp))))
    for (std::int64_t u = 0; u < s.batches * s.Hq * fp.query_blocks; ++u) {
      const std::int64_t bh = u / fp.query_blocks, i0 = u % fp.query_blocks * kB, rows = std::min(kB, s.L - i0);
      pack_rows(fp.q, bh, i0, rows, s.E, Acc(1), q_all.data() + (bh * Lp + i0) * Ep, Ep, kB);
      pack_rows(dout, bh, i0, rows, s.Ev, Acc(1), do_all.data() + (bh * Lp + i0) * Evp, Evp, kB);
      pack_rows_panels(fp.q, bh, i0, rows, s.E, q_panels.data() + (bh * Lp + i0) * Ep, kB, Ep);
      pack_rows_panels(dout, bh, i0, rows, s.Ev, do_panels.data() + (bh * Lp + i0) * Evp, kB, Evp);
    }
  }

  /// One thread's operands: its key block's K (as B panels), V^T and K^T.
  struct Thread {
    const FloatBackwardProducts& g;
    cpu::LineVector<Acc> kr = cpu::LineVector<Acc>(std::size_t(kB * g.Ep)),
                     vt = cpu::LineVector<Acc>(std::size_t(std::max<std::int64_t>(g.fp.s.Ev, 1) * kB));
    const Acc* kt = nullptr;

    /// Keys [j0, j0 + keys) of key/value head bhk, key block u = bhk key_blocks + j0 / kB.
    void load_keys(std::int64_t u, std::int64_t bhk, std::int64_t j0, std::int64_t keys) {
      kt = g.kt_all.data() + u * g.fp.s.E * kB;
      pack_rows_panels(g.fp.k, bhk, j0, keys, g.fp.s.E, kr.data(), kB, g.Ep);
      pack_transposed_panels(g.fp.v, bhk, j0, keys, g.fp.s.Ev, vt.data(), kB);
    }
    /// The query block at row `at` = bh Lp + i0 of the packed queries against the loaded keys:
    /// s (kB x kB, row-major) = q k^T, the forward pass's scores bit for bit.
    void scores(std::int64_t at, Acc* s) const {
      cpu::block_gemm_panels<Acc, false>(kB, kB, g.fp.s.E, g.q_all.data() + at * g.Ep, g.Ep, 1, kt, s, kB);
    }
    /// dp (kB x kB) = dO v^T.
    void dp(std::int64_t at, Acc* dp) const {
      cpu::block_gemm_panels<Acc, false>(kB, kB, g.fp.s.Ev, g.do_all.data() + at * g.Evp, g.Evp, 1, vt.data(), dp, kB);
    }
    /// dv (kB x Evp) += w^T dO, w (kB x kB) the weights (after dropout).
    void add_dv(std::int64_t at, const Acc* w, Acc* dv) const {
      cpu::block_gemm_panels<Acc, true>(kB, g.Evp, kB, w, 1, kB, g.do_panels.data() + at * g.Evp, dv, g.Evp);
    }
    /// dk (kB x Ep) += dS^T q and dq (kB x Ep, row-major) += dS k.
    void add_dk_dq(std::int64_t at, const Acc* ds, Acc* dk, Acc* dq) const {
      cpu::block_gemm_panels<Acc, true>(kB, g.Ep, kB, ds, 1, kB, g.q_panels.data() + at * g.Ep, dk, g.Ep);
      cpu::block_gemm_panels<Acc, true>(kB, g.Ep, kB, ds, kB, 1, kr.data(), dq, g.Ep);
    }
  };
};

/// FlashAttention-2's backward pass. out, dout: the forward output and its gradient (rows);
/// lse: (batch Hq, L) contiguous, in double: a float lse of magnitude ~10 is off by up to
/// 5e-7, an error every recomputed weight of its row shares, and which measured 3-7x the
/// gradient error of a naive float implementation (whose per-weight errors average out). Writes dq (batch Hq, L, E), dk (batch H, S, E), dv (batch H, S, Ev),
/// all contiguous. Products: the block products (FloatBackwardProducts' members).
template <class T, class Products = FloatBackwardProducts<T>>
void flash_backward_cpu(const FlashProblem<T>& fp, const SdpaRows<T>& out, const SdpaRows<T>& dout,
                        const double* lse, T* dq, T* dk, T* dv) {
  using Acc = math_t<T>;
  using Row = FlashRow<Acc>;
  constexpr std::int64_t kB = FlashProblem<T>::kB;
  const SdpaShape& s = fp.s;
  const std::int64_t heads = s.batches * s.Hq, kv_heads = s.batches * s.H;
  const std::int64_t E = s.E, Ev = s.Ev, Ep = fp.Ep, Evp = fp.Evp, Lp = fp.query_blocks * kB;
  const std::int64_t units = kv_heads * fp.key_blocks;
  const Acc scale = Acc(s.scale), c = fp.c();

  // D = rowsum(dO * out), one per query row, summed in double: a float sum is off by
  // ~eps sum_e |dO_e out_e|, an error that every dS of the row shares.
  cpu::LineVector<Acc> D(std::size_t(heads * s.L));
  WEFT_PRAGMA_OMP(omp parallel for schedule(static) num_threads(cpu::threads_for(heads * s.L * Ev)))
  for (std::int64_t hr = 0; hr < heads * s.L; ++hr)
    D[std::size_t(hr)] =
        Acc(row_dot(out.row(hr / s.L, hr % s.L), out.col_stride, dout.row(hr / s.L, hr % s.L), dout.col_stride, Ev));
  const Products products{fp, dout};
  const int threads =
      int(std::max<std::int64_t>(1, std::min<std::int64_t>(units, cpu::threads_for(units * kB * s.L * (E + Ev)))));
  // One dQ accumulator per thread ((batch Hq, Lp, Ep)), summed in a fixed order at the end.
  const std::int64_t dq_size = heads * Lp * Ep;
  cpu::LineVector<Acc> dq_acc(std::size_t(threads * dq_size), Acc(0));

  WEFT_PRAGMA_OMP(omp parallel num_threads(threads))
  {
    Acc* dq_mine = thread_slice(dq_acc, dq_size);
    typename Products::Thread operands{products};
    cpu::LineVector<Acc> dk_acc(std::size_t(kB * Ep)), dv_acc(std::size_t(kB * Evp)), p(std::size_t(kB * kB)), pd(std::size_t(kB * kB)), ds(std::size_t(kB * kB)),
        factors(kB);
    for (const std::int64_t u : dealt_units(units, [&](std::int64_t unit) { return fp.queries_seeing(unit); })) {
      const std::int64_t bhk = u / fp.key_blocks, kb = u % fp.key_blocks, j0 = kb * kB;
      const std::int64_t keys = std::min(kB, s.S - j0);
      operands.load_keys(u, bhk, j0, keys);
      Row::fill(dk_acc.data(), kB * Ep, Acc(0));
      Row::fill(dv_acc.data(), kB * Evp, Acc(0));
      for (std::int64_t g = 0; g < s.group; ++g) {
        const std::int64_t bh = bhk / s.H * s.Hq + bhk % s.H * s.group + g;
        for (std::int64_t qb = fp.query_block_begin(kb); qb < fp.query_blocks; ++qb) {
          const std::int64_t i0 = qb * kB, rows = std::min(kB, s.L - i0), at = bh * Lp + i0;
          operands.scores(at, p.data());
          const bool masked = fp.needs_mask(i0, j0);
          for (std::int64_t r = 0; r < kB; ++r) {
            Acc* row = p.data() + r * kB;
            if (r >= rows) {  // padding rows: no weights
              Row::fill(row, kB, Acc(0));
              continue;
            }
            // The forward pass's scores, bit for bit, so p = 2^(s2 - lse2) with lse2 = lse / (natural
            // per log2 unit) sums to 1 over the row: lse2 as hi + lo in Acc, s2 - hi exact where
            // the weight matters (Sterbenz). (Recomputing the scores any other way leaves each
            // row's weights off by a common factor ~ eps |s|: measured 3-5x the gradient error of
            // a naive float implementation.)
            Row::scale(row, kB, c);
            if (masked) fp.mask_row(row, bh, i0 + r, j0, fp.bias_unit());
            const double shift = lse[bh * s.L + i0 + r] / fp.to_natural();
            const Acc hi = Acc(shift), lo = std::isinf(shift) ? Acc(0) : Acc(shift - double(hi));
            Row::exp2_shifted(row, kB, hi, lo);
          }
          const Acc* weights = p.data();
          if (fp.dropout.active()) {
            std::copy(p.begin(), p.end(), pd.begin());
            for (std::int64_t r = 0; r < rows; ++r) fp.drop_row(pd.data() + r * kB, factors.data(), bh, i0 + r, j0);
            weights = pd.data();
          }
          // dV += weights^T dO
          operands.add_dv(at, weights, dv_acc.data());
          // dP = dO V^T, then dS = p (dP keep - D) in place
          operands.dp(at, ds.data());
          for (std::int64_t r = 0; r < rows; ++r) {
            Acc* d = ds.data() + r * kB;
            const Acc* pr = p.data() + r * kB;
            const Acc Di = D[std::size_t(bh * s.L + i0 + r)];
            if (fp.dropout.active()) {
              const Acc* wr = pd.data() + r * kB;
              // p keep = weights, so p (dP keep - D) = weights dP - p D
              for (std::int64_t j = 0; j < kB; ++j) d[j] = wr[j] * d[j] - pr[j] * Di;
            } else {
              for (std::int64_t j = 0; j < kB; ++j) d[j] = pr[j] * (d[j] - Di);
            }
            if (Row::max(pr, kB) > Acc(kDominantWeight))
              dominant_ds(fp, out, dout, bh, i0 + r, j0, pr, d, factors.data());
          }
          Row::fill(ds.data() + rows * kB, (kB - rows) * kB, Acc(0));
          // dK += dS^T Q;  dQ += dS K (both times scale, applied once at the end)
          operands.add_dk_dq(at, ds.data(), dk_acc.data(), dq_mine + at * Ep);
        }
      }
      for (std::int64_t r = 0; r < keys; ++r) {
        T* dkr = dk + (bhk * s.S + j0 + r) * E;
        T* dvr = dv + (bhk * s.S + j0 + r) * Ev;
        for (std::int64_t e = 0; e < E; ++e) dkr[e] = T(dk_acc[std::size_t(r * Ep + e)] * scale);
        for (std::int64_t e = 0; e < Ev; ++e) dvr[e] = T(dv_acc[std::size_t(r * Evp + e)]);
      }
    }
  }
  sum_thread_slices(dq_acc, threads, dq_size, heads, s.L, E, scale,
                    [=](std::int64_t bh, std::int64_t i, std::int64_t e) { return (bh * Lp + i) * Ep + e; }, dq);
}

#if WEFT_LINKED_KERNELS  // core/config.hpp
// Compiled once in the weft_kernels library (src/kernels.cpp): the files of a program that links
// it call these rather than instantiating them (bfloat16's block products depend on the ISA
// macros of each file's build, and stay in the headers; so do a .cu file's, whose host code
// lives in another ABI namespace: core/config.hpp).
extern template void flash_forward_cpu<float>(const FlashProblem<float>&, float*, double*);
extern template void flash_forward_cpu<double>(const FlashProblem<double>&, double*, double*);
extern template void flash_backward_cpu<float>(const FlashProblem<float>&, const SdpaRows<float>&,
                                               const SdpaRows<float>&, const double*, float*, float*, float*);
extern template void flash_backward_cpu<double>(const FlashProblem<double>&, const SdpaRows<double>&,
                                                const SdpaRows<double>&, const double*, double*, double*, double*);
#endif

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail::cpu::flash

#endif  // !defined(__CUDA_ARCH__)

// SPDX-License-Identifier: MIT
/// @file The checked shape of one attention call and its operands as rows of memory, shared by every backend.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <variant>
#include <vector>

#include "weft/core/factories.hpp"
#include "weft/nn/sdpa_options.hpp"

namespace weft::nn::detail {

using weft::detail::fail;

/// The extents of q (batch..., Hq, L, E), k (batch..., H, S, E), v (batch..., H, S, Ev);
/// `batch` is every dim before the heads (none for rank 2, where Hq = H = 1).
struct SdpaShape {
  Shape batch;
  bool has_heads = false;  // rank >= 3
  std::int64_t batches = 1, Hq = 1, H = 1, L = 0, S = 0, E = 0, Ev = 0;
  std::int64_t group = 1;  // query heads per key/value head
  double scale = 1;
  bool causal = false;
  /// Query i sees keys j <= i + causal_offset: 0 (upper_left) or S - L (lower_right).
  std::int64_t causal_offset = 0;
  double dropout_p = 0;
  std::uint64_t seed = 0;

  /// (batch..., Hq, rows, cols): the shape of out (rows = L, cols = Ev) or of the scores (L, S).
  Shape with_heads(std::int64_t heads, std::int64_t rows, std::int64_t cols) const {
    Shape s = batch;
    if (has_heads) s.push_back(heads);
    s.push_back(rows);
    if (cols >= 0) s.push_back(cols);
    return s;
  }
  Shape out_shape() const { return with_heads(Hq, L, Ev); }
  Shape lse_shape() const { return with_heads(Hq, L, -1); }
  Shape scores_shape() const { return with_heads(Hq, L, S); }
};

/// The mask's rank, or -1 when there is none.
inline std::int64_t mask_rank(const AttnMask& m) {
  return std::visit(
      [](const auto& t) -> std::int64_t {
        if constexpr (std::is_same_v<std::decay_t<decltype(t)>, std::monostate>) return -1;
        else return t.defined() ? t.dim() : -1;
      },
      m);
}

/// Checks q, k, v and the options against each other (PyTorch's rules) and returns the extents;
/// every message names `op`, the shapes and a fix.
inline SdpaShape sdpa_shape(const char* op, const Shape& q, const Shape& k, const Shape& v, const SdpaOptions& o) {
  auto shapes = [&] { return weft::detail::cat("q ", q, ", k ", k, ", v ", v); };
  if (q.rank() < 2 || k.rank() < 2 || v.rank() < 2)
    fail(op, "q, k and v need at least 2 dims (..., L, E), got ", shapes());
  if (q.rank() != k.rank() || q.rank() != v.rank())
    fail(op, "q, k and v need the same rank, got ", shapes(), "; unsqueeze the missing batch or head dims");
  const int r = q.rank();
  SdpaShape s;
  s.L = q[r - 2], s.E = q[r - 1], s.S = k[r - 2], s.Ev = v[r - 1];
  if (k[r - 1] != s.E)
    fail(op, "q's last dim E (", s.E, ") must equal k's (", k[r - 1], "), got ", shapes());
  if (v[r - 2] != s.S)
    fail(op, "k and v need the same sequence length S (dim -2), got ", shapes());
  s.has_heads = r >= 3;
  if (s.has_heads) {
    s.Hq = q[r - 3], s.H = k[r - 3];
    if (v[r - 3] != s.H) fail(op, "k and v need the same number of heads (dim -3), got ", shapes());
    if (s.Hq != s.H) {
      if (!o.enable_gqa)
        fail(op, "q has ", s.Hq, " heads but k and v have ", s.H, " (dim -3), got ", shapes(),
             "; set enable_gqa = true for grouped-query attention");
      if (s.H == 0 || s.Hq % s.H != 0)
        fail(op, "with enable_gqa, q's heads (", s.Hq, ") must be a multiple of k's and v's (", s.H, "), got ",
             shapes());
    }
    s.group = s.H ? s.Hq / s.H : 1;
  }
  for (int d = 0; d < r - 3; ++d) {
    if (q[d] != k[d] || q[d] != v[d])
      fail(op, "q, k and v need the same batch dims (all but the last 3), got ", shapes());
    s.batch.push_back(q[d]);
  }
  s.batches = s.batch.numel();
  s.scale = o.scale ? *o.scale : 1.0 / std::sqrt(double(s.E));
  if (!(o.dropout_p >= 0 && o.dropout_p < 1))
    fail(op, "dropout_p must be in [0, 1), got ", o.dropout_p, " (", shapes(), ")");
  s.dropout_p = o.dropout_p;
  s.seed = o.seed;
  const bool has_mask = mask_rank(o.attn_mask) >= 0;
  if (has_mask && o.is_causal)
    fail(op, "attn_mask and is_causal cannot both be set (as in PyTorch), got ", shapes(),
         "; fold the causal structure into the mask, or drop the mask");
  s.causal = o.is_causal;
  s.causal_offset = o.causal_variant == CausalVariant::lower_right ? s.S - s.L : 0;
  if (has_mask) {
    std::visit(
        [&](const auto& m) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(m)>, std::monostate>) {
            if (!m.device().is_cpu())
              fail(op, "attn_mask (shape ", m.shape(), ") is on ", m.device(), "; attention runs on the CPU");
            if (!broadcasts_to(m.shape(), s.scores_shape()))
              fail(op, "attn_mask of shape ", m.shape(), " does not broadcast to the scores' shape ",
                   s.scores_shape(), " (batch..., Hq, L, S) for ", shapes(),
                   "; size-1 dims and missing leading dims broadcast");
          }
        },
        o.attn_mask);
  }
  return s;
}

/// An operand (batch..., heads, rows, cols) as rows of memory: row r of flattened (batch, head)
/// index bh starts at data + offset[bh] + r * row_stride and its cols are contiguous. A tensor
/// whose last dim is not unit-stride is copied first; any other strides (a transposed head and
/// sequence dim, say) are read in place.
template <class T>
struct SdpaRows {
  Tensor<T> keep;  // owns the memory
  const T* data = nullptr;
  std::vector<std::int64_t> offset;
  std::int64_t row_stride = 0, col_stride = 1;

  const T* row(std::int64_t bh, std::int64_t r) const { return data + offset[std::size_t(bh)] + r * row_stride; }
};

/// Rows of `t`, viewed as (prod(dims before the last 2), rows, cols) through its strides.
/// With `unit_cols` the last dim is made contiguous (a copy when it is not).
template <class T>
SdpaRows<T> sdpa_rows(const Tensor<T>& t, bool unit_cols = true) {
  SdpaRows<T> rows;
  const int r = t.dim();
  rows.keep = unit_cols && t.shape()[r - 1] > 1 && t.strides()[r - 1] != 1 ? t.contiguous() : t;
  rows.data = rows.keep.data();
  rows.row_stride = rows.keep.strides()[r - 2];
  rows.col_stride = unit_cols ? 1 : rows.keep.strides()[r - 1];
  const Shape outer(t.shape().begin(), t.shape().end() - 2);
  rows.offset.resize(std::size_t(outer.numel()));
  for (std::int64_t i = 0; i < outer.numel(); ++i) {
    std::int64_t rest = i, off = 0;
    for (int d = outer.rank() - 1; d >= 0; --d) {
      off += (rest % outer[d]) * rows.keep.strides()[d];
      rest /= outer[d];
    }
    rows.offset[std::size_t(i)] = off;
  }
  return rows;
}

/// The mask as an additive bias in the compute type Acc, broadcast to (batch..., Hq, L, S):
/// a bool mask becomes 0 (attend) / -inf, a floating mask is converted. Empty without a mask.
template <class Acc>
SdpaRows<Acc> sdpa_bias(const AttnMask& mask, const SdpaShape& s) {
  SdpaRows<Acc> rows;
  std::visit(
      [&](const auto& m) {
        using M = std::decay_t<decltype(m)>;
        if constexpr (!std::is_same_v<M, std::monostate>) {
          using E = typename M::value_type;
          const M mc = m.contiguous();
          const E* p = mc.data();
          const Tensor<Acc> bias = weft::detail::generate<Acc>(mc.shape(), Device::cpu(), [p](std::int64_t i) {
            if constexpr (std::is_same_v<E, bool>) return p[i] ? Acc(0) : -std::numeric_limits<Acc>::infinity();
            else return Acc(math_t<E>(p[i]));
          });
          rows = sdpa_rows(bias.expand(s.scores_shape()), false);
        }
      },
      mask);
  return rows;
}

}  // namespace weft::nn::detail

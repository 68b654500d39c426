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
inline namespace WEFT_BACKEND_ABI {

using weft::detail::fail;
using weft::TensorBase;

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
  const bool has_mask = o.attn_mask.has_value();
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
        o.attn_mask.variant());
  }
  return s;
}

/// An operand (batch..., heads, rows, cols) read in place through its strides: element c of row
/// r of flattened (batch, head) index bh is at data + offset[bh] + r row_stride + c col_stride.
/// Nothing is copied (a transposed head and sequence dim is read as it is), which also spares
/// every caller the compile time of a copy kernel.
template <class T>
struct SdpaRows {
  TensorView<const T> keep;  // keeps the elements alive
  const T* data = nullptr;
  std::vector<std::int64_t> offset;
  std::int64_t row_stride = 0, col_stride = 1;

  SdpaRows() = default;  // no tensor (no mask)
  /// Rows of `t`, viewed as (prod(dims before the last 2), rows, cols) through its strides.
  explicit SdpaRows(const TensorBase<T>& t)
      : keep(t.view()), data(t.data()), row_stride(t.strides()[t.dim() - 2]), col_stride(t.strides()[t.dim() - 1]) {
    const Shape outer(t.shape().begin(), t.shape().end() - 2);
    offset.resize(std::size_t(outer.numel()));
    for (std::int64_t i = 0; i < outer.numel(); ++i) {
      std::int64_t rest = i, off = 0;
      for (int d = outer.rank() - 1; d >= 0; --d) {
        off += (rest % outer[d]) * t.strides()[d];
        rest /= outer[d];
      }
      offset[std::size_t(i)] = off;
    }
  }

  const T* row(std::int64_t bh, std::int64_t r) const { return data + offset[std::size_t(bh)] + r * row_stride; }
};

template <class T>
SdpaRows<T> sdpa_rows(const TensorBase<T>& t) {
  return SdpaRows<T>(t);
}

/// t's elements in row-major order, read through its strides (a copy kernel's compile time spared).
template <class T>
std::vector<T> sdpa_values(const TensorBase<T>& t) {
  std::vector<T> v(static_cast<std::size_t>(t.numel()));
  for (std::int64_t f = 0; f < t.numel(); ++f) {
    std::int64_t at = 0, rest = f;
    for (int d = t.dim() - 1; d >= 0; --d) at += (rest % t.shape()[d]) * t.strides()[d], rest /= t.shape()[d];
    v[std::size_t(f)] = t.data()[at];
  }
  return v;
}

/// The mask as an additive bias in the compute type Acc, broadcast to (batch..., Hq, L, S):
/// a bool mask becomes 0 (attend) / -inf, a floating mask is converted. Empty without a mask.
template <class Acc>
SdpaRows<Acc> sdpa_bias(const AttnMask& mask, const SdpaShape& s) {
  return std::visit(
      [&](const auto& m) -> SdpaRows<Acc> {
        using M = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<M, std::monostate>) {
          return SdpaRows<Acc>();
        } else {
          using E = typename M::value_type;
          if (!m.defined()) return SdpaRows<Acc>();
          // Read through the mask's own strides (no contiguous copy: a copy kernel per mask dtype
          // would cost every translation unit that calls attention its compile time).
          const Shape shape = m.shape();
          const Strides strides = m.strides();
          const E* p = m.data();
          const Tensor<Acc> bias = weft::detail::generate<Acc>(shape, Device::cpu(), [&](std::int64_t f) {
            std::int64_t at = 0;
            for (int d = shape.rank() - 1; d >= 0; --d) at += (f % shape[d]) * strides[d], f /= shape[d];
            if constexpr (std::is_same_v<E, bool>) return p[at] ? Acc(0) : -std::numeric_limits<Acc>::infinity();
            else return Acc(math_t<E>(p[at]));
          });
          return SdpaRows<Acc>(bias.expand(s.scores_shape()));
        }
      },
      mask.variant());
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn::detail

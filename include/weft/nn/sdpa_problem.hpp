// SPDX-License-Identifier: MIT
/// @file The checked shape of one attention call and its operands as rows of memory, shared by every backend.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <variant>
#include <vector>

#include "weft/ops/factories.hpp"
#include "weft/nn/sdpa_options.hpp"
#include "weft/backend/attention.hpp"

namespace weft::nn::detail {
inline namespace WEFT_BACKEND_ABI {

using weft::detail::fail;
using weft::TensorBase;
using weft::detail::SdpaDropout;
using weft::detail::SdpaRows;
using weft::detail::SdpaShape;
using weft::detail::sdpa_rows;

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

/// t's elements in row-major order, read through its strides (a copy kernel's compile time spared).
template <class T>
std::vector<T> sdpa_values(const TensorBase<T>& t) {
  std::vector<T> v(static_cast<std::size_t>(t.numel()));
  for (std::int64_t f = 0; f < t.numel(); ++f) v[std::size_t(f)] = t.data()[weft::detail::strided_offset(f, t.shape(), t.strides())];
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
            const std::int64_t at = weft::detail::strided_offset(f, shape, strides);
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

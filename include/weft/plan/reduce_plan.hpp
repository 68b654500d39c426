// SPDX-License-Identifier: MIT
/// @file ReducePlan: a reduction's iteration space (kept dims outer, reduced dims inner, dims merged where every operand allows).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "weft/core/shape.hpp"
#include "weft/plan/iteration.hpp"

namespace weft::detail {

/// One dim of a reduction's collapsed space (a placeholder of extent 1 has source_dim -1).
using ReduceGroup = DimGroup;

/// True when every operand steps group `g` with stride 0 or 1: plain packet loads on the CPU,
/// coalesced loads on the GPU. `strides`: every operand's, broadcast to the reduction's shape.
inline bool unit_stride_group(const ReduceGroup& g, const std::vector<Strides>& strides) {
  if (g.source_dim < 0) return false;
  for (const Strides& s : strides)
    if (s[g.source_dim] != 0 && s[g.source_dim] != 1) return false;
  return true;
}

/// Kept dims (row-major output order) and reduced dims of a reduction over
/// an expression of shape `full`. Logical element i of the reduction is
/// output o = i / n_red, reduced index r = i % n_red: each output's inputs
/// form one contiguous run of logical indices, with the innermost reduced
/// dim fastest.
struct ReducePlan {
  Shape full;
  std::vector<ReduceGroup> kept;     // merged; may be empty (a full reduction)
  std::vector<ReduceGroup> reduced;  // merged, outermost first; never empty
  std::int64_t n_out = 1;
  std::int64_t n_red = 1;

  int nk() const { return int(kept.size()); }
  int nr() const { return int(reduced.size()); }

  /// An IterationSpace that walks these groups in this order (the last one
  /// innermost), so the pointwise evaluators read the expression in it.
  IterationSpace space(const std::vector<ReduceGroup>& order) const {
    IterationSpace s;
    s.full = full;
    for (const ReduceGroup& g : order) {
      s.source_dim[s.shape.rank()] = g.source_dim;
      s.shape.push_back(g.extent);
    }
    s.numel = n_out * n_red;
    s.linear = false;
    return s;
  }

  /// Kept dims outer, reduced dims inner: a run of the innermost reduced dim per row.
  IterationSpace inner_space() const {
    std::vector<ReduceGroup> order = kept;
    order.insert(order.end(), reduced.begin(), reduced.end());
    return space(order);
  }

  /// Outer kept dims, then reduced dims, then the innermost kept dim: each
  /// row holds neighbouring outputs (column reductions vectorize across them).
  IterationSpace column_space() const {
    std::vector<ReduceGroup> order(kept.begin(), kept.end() - 1);
    order.insert(order.end(), reduced.begin(), reduced.end());
    order.push_back(kept.back());
    return space(order);
  }
};

/// Plans a reduction of an expression of shape `full` over the dims with
/// `reduce[d]` set. `strides` holds every operand's strides broadcast to
/// `full`; the reduced dims are ordered by the strides of operand `primary`
/// (largest first, so a transposed input is still read along its memory),
/// kept dims stay in output order. Neighbouring dims of one kind merge when
/// every operand can step both with one stride; size-1 dims drop out.
inline ReducePlan plan_reduction(const Shape& full, const std::vector<bool>& reduce,
                                 const std::vector<Strides>& strides, int primary) {
  ReducePlan plan;
  plan.full = full;
  std::vector<int> kept_dims, reduced_dims;
  for (int d = 0; d < full.rank(); ++d) {
    if (reduce[d]) plan.n_red *= full[d];
    else plan.n_out *= full[d];
    if (full[d] != 1) (reduce[d] ? reduced_dims : kept_dims).push_back(d);
  }
  if (primary >= 0 && primary < int(strides.size())) {
    const Strides& p = strides[std::size_t(primary)];
    std::stable_sort(reduced_dims.begin(), reduced_dims.end(),
                     [&](int a, int b) { return std::abs(p[a]) > std::abs(p[b]); });
  }
  plan.kept = merge_dims(kept_dims, full, strides);
  plan.reduced = merge_dims(reduced_dims, full, strides);
  if (plan.reduced.empty()) plan.reduced.push_back({1, -1});
  return plan;
}


}  // namespace weft::detail

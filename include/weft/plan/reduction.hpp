// SPDX-License-Identifier: MIT
/// @file ReducePlan: a reduction's iteration space (kept dims outer, reduced dims inner, dims merged where every operand allows).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "weft/core/config.hpp"
#include "weft/core/device.hpp"

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
WEFT_SHARED ReducePlan plan_reduction(const Shape& full, const std::vector<bool>& reduce,
                                 const std::vector<Strides>& strides, int primary)
#if WEFT_SHARED_BODIES
{
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
  plan.kept.resize(kept_dims.size());
  plan.kept.resize(std::size_t(merge_dims(kept_dims, full, strides, plan.kept.data())));
  plan.reduced.resize(reduced_dims.size());
  plan.reduced.resize(std::size_t(merge_dims(reduced_dims, full, strides, plan.reduced.data())));
  if (plan.reduced.empty()) plan.reduced.push_back({1, -1});
  return plan;
}
#else
;
#endif

/// One operand of a reduction's expression, as the checks and the plan read it.
struct ReduceLeaf {
  bool defined;
  Device device;
  const Shape* shape;
  const Strides* strides;
};

/// Where a reduction runs, its input and output shapes, every operand's strides (broadcast to
/// `full`) and the plan: everything checked before any allocation.
struct ReduceSetup {
  Device device = Device::cpu();
  Shape full;
  Shape out_shape;
  std::vector<Strides> strides;
  ReducePlan plan;
};

/// "[2, 3]" or "all dims" for messages.
inline std::string describe_dims(const std::vector<std::int64_t>* dims) {
  if (!dims || dims->empty()) return "all dims";
  std::string s = dims->size() == 1 ? "dim " : "dims [";
  for (std::size_t i = 0; i < dims->size(); ++i) s += cat(i ? ", " : "", (*dims)[i]);
  return dims->size() == 1 ? s : s + "]";
}

/// Checks devices, shapes and dims, and plans the reduction of operands `leaves` (plan_reduction). `nonempty`:
/// the op has no identity (max, min), so an empty reduced range is an error. Not a template:
/// compiled once per translation unit, whatever the expression.
WEFT_SHARED ReduceSetup reduction_setup(const char* op, const std::vector<ReduceLeaf>& leaves,
                               const std::vector<std::int64_t>* dims, bool keepdim, bool nonempty)
#if WEFT_SHARED_BODIES
{
  ReduceSetup in;
  std::vector<Shape> shapes;
  for (const ReduceLeaf& leaf : leaves) shapes.push_back(*leaf.shape);
  for (const ReduceLeaf& leaf : leaves) {
    if (!leaf.defined) fail(op, "the input is an empty (default-constructed) tensor");
    if (leaf.device != leaves[0].device)
      fail(op, "operands are on ", leaves[0].device, " and ", leaf.device, " (shapes ", join_shapes(shapes),
           "); move them to one device with .to(device) first");
  }
  if (!leaves.empty()) in.device = leaves[0].device;
  in.full = broadcast_shapes(op, shapes);
  const int rank = in.full.rank();

  const bool all = !dims || dims->empty();
  std::vector<bool> reduce(std::size_t(rank), all);
  if (!all) {
    for (std::int64_t d : *dims) {
      const int w = wrap_dim_of(op, d, in.full);
      if (rank == 0) continue;  // a rank-0 tensor accepts dim 0 / -1 and has nothing to reduce
      if (reduce[std::size_t(w)])
        fail(op, "dim ", w, " appears more than once in ", describe_dims(dims), " (input shape ", in.full,
             "); list each dim once");
      reduce[std::size_t(w)] = true;
    }
  }
  for (int d = 0; d < rank; ++d) {
    if (!reduce[std::size_t(d)]) in.out_shape.push_back(in.full[d]);
    else if (keepdim) in.out_shape.push_back(1);
    if (nonempty && reduce[std::size_t(d)] && in.full[d] == 0)
      fail(op, "cannot reduce over dim ", d, " of size 0 (input shape ", in.full, ", reducing ", describe_dims(dims),
           "): ", op, " of an empty set is undefined; reduce over non-empty dims");
  }

  int primary = 0;
  std::int64_t largest = -1;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    in.strides.push_back(broadcast_strides(*leaves[i].shape, *leaves[i].strides, in.full));
    if (leaves[i].shape->numel() > largest) largest = leaves[i].shape->numel(), primary = int(i);
  }
  in.plan = plan_reduction(in.full, reduce, in.strides, primary);
  return in;
}
#else
;
#endif

/// How the |x| values of one tensor combine into its p-norm (foreach_norm): a sum of |x|^p, or the
/// max for p = inf; partials of pieces combine, and finish gives the norm.
struct ForeachNormOrder {
  double p;
  bool is_max() const { return std::isinf(p); }
  double finish(double partial) const { return is_max() || p == 1 ? partial : std::pow(partial, 1.0 / p); }
  double combine(double a, double b) const { return is_max() ? std::max(a, b) : a + b; }
};

}  // namespace weft::detail

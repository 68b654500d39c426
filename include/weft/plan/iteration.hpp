// SPDX-License-Identifier: MIT
/// @file The iteration space of a pointwise kernel: dims merged where every operand allows it.
#pragma once

#include <cstdint>
#include <span>

#include "weft/core/config.hpp"
#include "weft/core/shape.hpp"

namespace weft::detail {

/// One dim of a collapsed space: `extent` elements, stepped with the strides of original dim
/// `source_dim` (the innermost of the dims merged into it).
struct DimGroup {
  std::int64_t extent = 1;
  int source_dim = -1;
};

/// `dims` (dims of `shape`, in walking order, outermost first) merged into groups, written to
/// `groups` (room for dims.size()); returns their count. A dim joins the previous group when every
/// operand steps both with one stride (s[last] == s[d] shape[d]). `operands`: every operand's
/// strides over `shape`. No allocation: every assignment plans its space.
inline int merge_dims(std::span<const int> dims, const Shape& shape, std::span<const Strides> operands,
                      DimGroup* groups) {
  int n = 0;
  for (int d : dims) {
    bool mergeable = n > 0;
    for (const Strides& s : operands)
      if (mergeable && s[groups[n - 1].source_dim] != s[d] * shape[d]) mergeable = false;
    if (mergeable) groups[n - 1] = {groups[n - 1].extent * shape[d], d};
    else groups[n++] = {shape[d], d};
  }
  return n;
}

/// The destination's shape with size-1 dims dropped and neighbouring dims
/// merged wherever every operand's strides let a single stride walk both.
/// A contiguous, same-shape assignment collapses to rank 1 with unit
/// strides: the `linear` fast path (no index arithmetic at all).
struct IterationSpace {
  Shape full;                        // the destination's shape
  Shape shape;                       // collapsed extents, rank >= 1
  int source_dim[kMaxRank] = {};     // original dim whose stride each collapsed dim takes (-1: none)
  std::int64_t numel = 0;
  bool linear = false;
  bool foreach = false;              // a foreach kernel: shape is one tensor of the lists

  int rank() const { return shape.rank(); }
  std::int64_t inner() const { return shape[shape.rank() - 1]; }

  /// An operand's strides (over the original shape) in the collapsed space.
  Strides collapse(const Strides& full) const {
    Strides out = Shape::filled(rank(), 0);
    for (int d = 0; d < rank(); ++d) out[d] = source_dim[d] < 0 ? 0 : full[source_dim[d]];
    return out;
  }
};

/// `operands` holds every destination's strides and every input's strides
/// broadcast to `shape`.
WEFT_SHARED IterationSpace plan_iteration(const Shape& shape, std::span<const Strides> operands)
#if WEFT_SHARED_BODIES
{
  IterationSpace space;
  space.full = shape;
  space.numel = shape.numel();
  int dims[kMaxRank], rank = 0;
  for (int d = 0; d < shape.rank(); ++d)
    if (shape[d] != 1) dims[rank++] = d;
  DimGroup groups[kMaxRank];
  const int merged = merge_dims(std::span<const int>(dims, std::size_t(rank)), shape, operands, groups);
  for (int g = 0; g < merged; ++g) {
    space.source_dim[space.rank()] = groups[g].source_dim;
    space.shape.push_back(groups[g].extent);
  }
  if (space.rank() == 0) {
    space.shape.push_back(shape.numel() == 0 ? 0 : 1);
    space.source_dim[0] = -1;
  }
  space.linear = space.rank() == 1;
  for (const Strides& s : operands)
    if (space.linear && space.source_dim[0] >= 0 && s[space.source_dim[0]] != 1) space.linear = false;
  if (space.source_dim[0] < 0) space.linear = false;
  return space;
}
#else
;
#endif

/// Writes the outer coordinates (all but the innermost) of row `row`.
inline void row_coordinates(const IterationSpace& space, std::int64_t row, std::int64_t* outer) {
  unravel(row, space.shape.begin(), space.rank() - 1, outer);
}

}  // namespace weft::detail

// SPDX-License-Identifier: MIT
/// @file ReduceOp: how all_reduce and reduce_scatter combine the ranks' elements.
#pragma once

namespace weft::dist {

/// out = x_0 (op) x_1 (op) ... over the ranks of a group, element by element.
/// sum: x_0 + ... + x_{n-1} (logical or on bool); avg: sum / n, floating dtypes only;
/// max, min: the largest / smallest (or / and on bool).
enum class ReduceOp { sum, avg, max, min };

constexpr const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::avg: return "avg";
    case ReduceOp::max: return "max";
    case ReduceOp::min: return "min";
  }
  return "?";
}

}  // namespace weft::dist

// SPDX-License-Identifier: MIT
/// @file weft::Reduced: a reduction over dims (sum, mean, amax, var, ...) as an expression node. Assigned alone it is the reduction; kept dims (keepdim) inside a pointwise expression of its input's shape let the CPU run the expression as the reduction's row epilogue (backend/row_epilogue.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "weft/backend/row_epilogue.hpp"
#include "weft/core/tensor.hpp"
#include "weft/expr/dense.hpp"

namespace weft {

/// A reduction of expression E over `dims` (an empty list: every dim). Kind names the op and
/// carries its parameters; it evaluates (`evaluate(x, dims, keepdim)`), gives the output's shape,
/// says whether the reduction can hand out row values (`rows(input, dim)`: one dim, a floating
/// CPU input) and reduces one block of rows (`reduce_rows<O>(block, dim, out)`) or one row at a
/// time (`row_reduction<O>(input, rows)`) with the reducer and numerics of its eager form (ops/reduce.hpp, ops/statistics.hpp).
template <class Kind, class E>
struct Reduced : Expr<Reduced<Kind, E>> {
  using value_type = typename Kind::template result_t<typename E::value_type>;
  using children = detail::TypeList<>;  // one operand to pointwise kernels (expr/dense.hpp)
  static constexpr bool kDense = true;
  Kind kind;
  E x;
  std::vector<std::int64_t> dims;
  bool keepdim = false;

  /// The node, after the eager reduction's checks (input, dims, dtype): a bad call fails where
  /// it is made. An input holding dense nodes is checked when it runs.
  Reduced checked() && {
    if constexpr (detail::dense_nodes_v<E> == 0) kind.check(x, dims);
    return std::move(*this);
  }
  const E& input() const { return x; }
  const char* op_name() const { return kind.op; }
  /// The output's shape; a weft::Error for a bad input or dims.
  Shape shape() const { return kind.out_shape(x, dims, keepdim); }
  /// The reduction as a new tensor.
  Tensor<value_type> evaluate() const { return kind.evaluate(x, dims, keepdim); }
  /// The reduction written into `out` (contiguous, of its shape) where the kind can (sum, mean,
  /// max, min: `y = sum(x, 1)` into an existing y); false, with nothing written, elsewhere (the
  /// caller copies a new tensor in).
  bool evaluate_into(const TensorView<value_type>& out) const {
    if constexpr (requires { kind.evaluate_into(x, dims, keepdim, out); }) return kind.evaluate_into(x, dims, keepdim, out);
    else return false;
  }
  /// The input's shape and the reduced dim, for a row epilogue: one dim kept (keepdim), a
  /// floating CPU input; `input` is the node's input with its own dense nodes replaced by
  /// placeholders. Checks as the eager reduction does (the same errors).
  template <class I>
  std::optional<detail::RowReduction> rows(const I& input) const {
    if (!keepdim || dims.size() != 1) return std::nullopt;
    return kind.rows(input, dims[0]);
  }
  /// One value per row of `block` (the input restricted to a block of rows) along `dim`, into out.
  template <class I>
  void reduce_rows(const I& block, int dim, value_type* out) const {
    if constexpr (is_floating_v<typename E::value_type>) kind.template reduce_rows<value_type>(block, dim, out);
  }
  /// The mean reduction the row path of this one reads (var and std: their first pass, shared with
  /// an equal mean in the statement), where the kind has one.
  auto row_mean() const
    requires requires(const Kind& k) { k.row_mean(x, dims); }
  {
    return kind.row_mean(x, dims);
  }
  /// One row at a time: a callable from a row's kept coordinates to its value, `input` the node's
  /// input with its own reductions read as RowValue nodes; `rows` builds the folds
  /// (backend/row_epilogue.hpp); `mean`: row_mean()'s value for the row, where there is one.
  template <class I, class Rows>
  auto row_reduction(const I& input, Rows& rows, const void* mean) const {
    if constexpr (is_floating_v<typename E::value_type>)
      return kind.template row_reduction<value_type>(input, rows, mean);
    else return [](const std::int64_t*) { return value_type{}; };  // never run: rows() refuses the input
  }
  /// Whether `o` computes the same values (same op, parameters, dims and input tensors): a row
  /// epilogue computes them once. Never for inputs holding dense nodes (not compared).
  bool same_as(const Reduced& o) const {
    if constexpr (detail::dense_nodes_v<E> != 0) return false;
    else return kind == o.kind && dims == o.dims && keepdim == o.keepdim && detail::same_tree(x, o.x);
  }
};

}  // namespace weft

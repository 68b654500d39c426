// SPDX-License-Identifier: MIT
/// @file Dense nodes in expressions: nodes whose value at one element reads many elements of their operands (matmul), how a tree counts them, and the rewrite that turns them into leaves (evaluated, or a block of a fused pass).
///
/// A pointwise kernel reads each operand at the element it writes; a matmul's element (i, j) reads
/// a whole row and column. So a dense node is opaque to the pointwise machinery (its `children`
/// are empty: tree walks see it as one operand), and whatever runs a statement first rewrites it:
/// into a Leaf over its evaluated value (a temporary tensor), or, where the dense op can run the
/// statement as its epilogue (backend/dense_statements.hpp), into a Leaf over one finished block
/// of its output at a time.
#pragma once

#include <concepts>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "weft/expr/tree.hpp"

namespace weft {

/// A dense expression node: an Expression with `kDense` that evaluates itself into a new tensor
/// (`evaluate()`), can say its shape (`shape()`, which checks its operands) and names its op for
/// messages (`op_name()`: "matmul").
template <class N>
concept DenseNode = Expression<N> && requires(const N& n) {
  N::kDense;
  n.evaluate();
  n.shape();
  { n.op_name() } -> std::convertible_to<const char*>;
};

namespace detail {

/// The number of dense nodes in E's tree.
template <class E>
inline constexpr std::size_t dense_nodes_v =
    tree_sum<E>([]<class M>(std::type_identity<M>) { return DenseNode<M> ? 1 : 0; });

// The rewrites evaluate dense nodes, which run the backend: in its ABI namespace (docs/architecture.md,
// "ODR safety").
inline namespace WEFT_BACKEND_ABI {

/// E's tree with every single-tensor Leaf's view replaced by on_leaf(view) and every dense node
/// by a Leaf over on_dense(node) (a TensorView<const value_type>, or something converting to one),
/// or by on_dense(node) itself where that is an expression node (a row epilogue's RowValue);
/// numbers and lists stay. Operands are rewritten left to right.
template <class E, class OnLeaf, class OnDense>
auto rewrite_leaves(const E& e, const OnLeaf& on_leaf, const OnDense& on_dense) {
  if constexpr (DenseNode<E>) {
    using T = typename E::value_type;
    if constexpr (Expression<decltype(on_dense(e))>) return on_dense(e);
    else return Leaf<T>{{}, TensorView<const T>(on_dense(e))};
  } else if constexpr (is_instance_v<E, Leaf>) {
    return E{{}, on_leaf(e.tensor)};
  } else if constexpr (is_map_v<E>) {
    return [&]<std::size_t... Is>(std::index_sequence<Is...>) {
      using M = Map<typename E::op_type, decltype(rewrite_leaves(get<Is>(e.args), on_leaf, on_dense))...>;
      return M{{}, e.op, {{{rewrite_leaves(get<Is>(e.args), on_leaf, on_dense)}...}}};
    }(std::make_index_sequence<decltype(e.args)::size>{});
  } else if constexpr (is_cast_v<E>) {
    using C = Cast<typename E::value_type, decltype(rewrite_leaves(e.arg, on_leaf, on_dense))>;
    return C{{}, rewrite_leaves(e.arg, on_leaf, on_dense)};
  } else {
    return e;
  }
}

/// E with every dense node evaluated (into a new tensor each) and read as a leaf: what a
/// pointwise kernel can run. E itself when it has none.
template <class E>
auto stage_dense(const E& e) {
  if constexpr (dense_nodes_v<E> == 0) return e;
  else
    return rewrite_leaves(
        e, [](const auto& view) { return view; }, [](const auto& node) { return node.evaluate(); });
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail
}  // namespace weft

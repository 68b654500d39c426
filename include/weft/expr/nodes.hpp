// SPDX-License-Identifier: MIT
/// @file Expression nodes: Leaf (a tensor), Scalar (a number), Map (an op over operands), Cast.
#pragma once

#include <cstdint>
#include <type_traits>

#include "weft/core/tuple.hpp"
#include "weft/expr/expr.hpp"
#include "weft/expr/ops.hpp"

namespace weft {

/// A tensor read at every point of the iteration space (broadcast as needed).
template <Element T>
struct Leaf : Expr<Leaf<T>> {
  using value_type = T;
  Tensor<T> tensor;
};

/// A number; its dtype only counts across categories (PyTorch's wrapped numbers).
template <class S>
struct Scalar : Expr<Scalar<S>> {
  static_assert(std::is_same_v<S, bool> || std::is_same_v<S, std::int64_t> || std::is_same_v<S, double>);
  using value_type = S;
  S value;
};

namespace detail {

template <class N>
inline constexpr bool is_scalar_node_v = false;
template <class S>
inline constexpr bool is_scalar_node_v<Scalar<S>> = true;

struct NoType {};

template <class A, class B>
struct promote_optional {
  using type = promote_t<A, B>;
};
template <class B>
struct promote_optional<NoType, B> {
  using type = B;
};
template <class A>
struct promote_optional<A, NoType> {
  using type = A;
};
template <>
struct promote_optional<NoType, NoType> {
  using type = NoType;
};

template <class... Ts>
struct promote_all {
  using type = NoType;
};
template <class T, class... Rest>
struct promote_all<T, Rest...> {
  using type = typename promote_optional<T, typename promote_all<Rest...>::type>::type;
};

template <class T, class S>
struct apply_scalar {
  using type = promote_with_scalar_t<T, S>;
};
template <class T>
struct apply_scalar<T, NoType> {
  using type = T;
};

/// Result dtype of an op over these nodes: tensors promote among themselves,
/// numbers only lift the category (int tensor * 2.5 -> float32).
template <class... Nodes>
struct mixed_promote {
  using tensors = typename promote_all<std::conditional_t<is_scalar_node_v<Nodes>, NoType, typename Nodes::value_type>...>::type;
  using scalars = typename promote_all<std::conditional_t<is_scalar_node_v<Nodes>, typename Nodes::value_type, NoType>...>::type;
  static_assert(!std::is_same_v<tensors, NoType>, "weft: an expression needs at least one tensor operand");
  using type = typename apply_scalar<tensors, scalars>::type;
};

template <ops::Kind kind, class... Args>
struct map_types;
template <class... Args>
struct map_types<ops::Kind::arithmetic, Args...> {
  using value = typename mixed_promote<Args...>::type;
  using compute = math_t<value>;
};
template <class... Args>
struct map_types<ops::Kind::floating, Args...> {
  using value = to_floating_t<typename mixed_promote<Args...>::type>;
  using compute = math_t<value>;
};
template <class... Args>
struct map_types<ops::Kind::comparison, Args...> {
  using value = bool;
  using compute = math_t<typename mixed_promote<Args...>::type>;
};
template <class Cond, class A, class B>
struct map_types<ops::Kind::where, Cond, A, B> {
  using value = typename mixed_promote<A, B>::type;
  using compute = math_t<value>;
};

}  // namespace detail

/// op(args...) at every point. One node type serves every unary, binary and ternary op.
template <class Op, class... Args>
struct Map : Expr<Map<Op, Args...>> {
  using types = detail::map_types<Op::kind, Args...>;
  /// dtype of the result (what eval() returns).
  using value_type = typename types::value;
  /// Type the operands are converted to before op runs (float for 16-bit floats).
  using compute_type = typename types::compute;

  [[no_unique_address]] Op op;
  detail::Tuple<Args...> args;
};

/// The operand converted to dtype U (rounded to U's precision, like tensor.to(U)).
template <Element U, class E>
struct Cast : Expr<Cast<U, E>> {
  using value_type = U;
  E arg;
};

namespace detail {

/// Preorder list of the Map node types in a tree: the candidates for sharing.
template <class N>
struct map_types_in {
  using type = TypeList<>;
};
template <class Op, class... Args>
struct map_types_in<Map<Op, Args...>> {
  using type = concat_t<TypeList<Map<Op, Args...>>, typename map_types_in<Args>::type...>;
};
template <Element U, class E>
struct map_types_in<Cast<U, E>> {
  using type = typename map_types_in<E>::type;
};

// The tree walkers recurse into children of any node type. Nodes live in
// namespace weft, so argument-dependent lookup does not find these
// weft::detail overloads: each is declared before any is defined (otherwise
// a Map over a Cast only compiles when the callback happens to come from
// weft::detail).
template <class F, class T>
void for_each_leaf(Leaf<T>& leaf, F&& f);
template <class F, class S>
void for_each_leaf(Scalar<S>&, F&&);
template <class F, class Op, class... Args>
void for_each_leaf(Map<Op, Args...>& node, F&& f);
template <class F, class U, class E>
void for_each_leaf(Cast<U, E>& node, F&& f);
template <class T>
bool same_tree(const Leaf<T>& a, const Leaf<T>& b);
template <class S>
bool same_tree(const Scalar<S>& a, const Scalar<S>& b);
template <class Op, class... Args>
bool same_tree(const Map<Op, Args...>& a, const Map<Op, Args...>& b);
template <class U, class E>
bool same_tree(const Cast<U, E>& a, const Cast<U, E>& b);

/// Calls f(leaf) for every Leaf in the tree, left to right.
template <class F, class T>
void for_each_leaf(Leaf<T>& leaf, F&& f) {
  f(leaf);
}
template <class F, class S>
void for_each_leaf(Scalar<S>&, F&&) {}
template <class F, class Op, class... Args>
void for_each_leaf(Map<Op, Args...>& node, F&& f) {
  for_each_in(node.args, [&](auto& child) { for_each_leaf(child, f); });
}
template <class F, class U, class E>
void for_each_leaf(Cast<U, E>& node, F&& f) {
  for_each_leaf(node.arg, f);
}

/// Structural equality: same tensors (address, shape, strides), numbers and ops.
template <class T>
bool same_tree(const Leaf<T>& a, const Leaf<T>& b) {
  return a.tensor.data() == b.tensor.data() && a.tensor.shape() == b.tensor.shape() &&
         a.tensor.strides() == b.tensor.strides();
}
template <class S>
bool same_tree(const Scalar<S>& a, const Scalar<S>& b) {
  return a.value == b.value;
}
template <class Op, class... Args>
bool same_tree(const Map<Op, Args...>& a, const Map<Op, Args...>& b) {
  return [&]<std::size_t... Is>(std::index_sequence<Is...>) {
    return (same_tree(get<Is>(a.args), get<Is>(b.args)) && ...);
  }(std::index_sequence_for<Args...>{});
}
template <class U, class E>
bool same_tree(const Cast<U, E>& a, const Cast<U, E>& b) {
  return same_tree(a.arg, b.arg);
}

}  // namespace detail
}  // namespace weft

// SPDX-License-Identifier: MIT
/// @file ad::Expression (a pointwise expression that reads Vars) and its backward derived from the expression's type at compile time: ONE kernel writes the gradient of every Var it reads.
///
/// An operator or function with a Var (or an ad::Expression) among its operands builds an
/// `ad::Expression`: the plain weft expression with each Var's value as a Leaf, which of its
/// leaves (in preorder) are Vars, and those Vars' tape nodes. Assigned to a Var it runs as the
/// same one kernel as for tensors and records one node. That node's backward walks the
/// expression's type (backprop: each operand of an op gets g * d op / d operand,
/// ad/derivatives.hpp) down to the Var leaves, and fuses one statement per Var leaf,
///   grad_j = where(accumulate_j, grad_j, 0) + contribution_j,
/// into ONE kernel (weft::fuse): subexpressions shared between the contributions are computed
/// once, and the forward's intermediates are recomputed from the saved leaves rather than kept.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/ad/derivatives.hpp"
#include "weft/ad/saved.hpp"
#include "weft/ad/var.hpp"
#include "weft/expr/tree.hpp"
#include "weft/ops/fuse.hpp"
#include "weft/ops/reduce.hpp"

namespace weft::ad {
inline namespace WEFT_BACKEND_ABI {

template <class E, bool... kTracked>
struct Expression;

namespace detail {

/// Leaf nodes (single tensors) of a plain expression type.
template <class E>
inline constexpr std::size_t leaf_count_v =
    weft::detail::tree_sum<E>([]<class M>(std::type_identity<M>) { return weft::detail::is_instance_v<M, Leaf>; });

template <class X>
inline constexpr bool is_var_v = weft::detail::is_instance_v<X, Var>;
template <class X>
struct is_ad_expression : std::false_type {};
template <class E, bool... kTracked>
struct is_ad_expression<Expression<E, kTracked...>> : std::true_type {};

/// An operand that makes a builder record on the tape: a Var or an ad::Expression.
template <class X>
concept Tracked = is_var_v<std::remove_cvref_t<X>> || is_ad_expression<std::remove_cvref_t<X>>::value;
/// What an autograd builder takes: tracked operands, and what plain builders take (constants).
template <class X>
concept AdOperand = Tracked<X> || weft::Operand<X>;
/// Operands of an autograd builder: all valid, one at least tracked.
template <class... Xs>
concept AdOperands = (AdOperand<Xs> && ...) && (Tracked<Xs> || ...);

template <bool... B>
struct BoolList {
  static constexpr std::size_t size = sizeof...(B);
  static constexpr std::array<bool, sizeof...(B) + 1> bits{B..., false};
};

template <class... Lists>
struct concat_bools;
template <>
struct concat_bools<> {
  using type = BoolList<>;
};
template <bool... A, class... Rest>
struct concat_bools<BoolList<A...>, Rest...> {
  template <class L>
  struct prepend;
  template <bool... B>
  struct prepend<BoolList<B...>> {
    using type = BoolList<A..., B...>;
  };
  using type = typename prepend<typename concat_bools<Rest...>::type>::type;
};

template <std::size_t... I>
auto all_false(std::index_sequence<I...>) -> BoolList<(void(I), false)...>;

/// The pieces of one builder operand: its plain expression, which of its leaves are Vars
/// (`Mask`), and their nodes in order.
template <class E, class Mask, std::size_t N>
struct Unwrapped {
  using mask = Mask;
  E expr;
  std::array<std::shared_ptr<NodeBase>, N> nodes;
};

template <class X>
auto unwrap(const X& x) {
  if constexpr (is_var_v<X>) {
    using T = typename X::value_type;
    return Unwrapped<Leaf<T>, BoolList<true>, 1>{Leaf<T>{{}, TensorView<const T>(x.value().view())}, {x.node()}};
  } else if constexpr (is_ad_expression<X>::value) {
    return Unwrapped<decltype(x.expr), typename X::mask, X::kNodes>{x.expr, x.nodes};
  } else {
    using E = weft::detail::expr_t<X>;
    return Unwrapped<E, decltype(all_false(std::make_index_sequence<leaf_count_v<E>>{})), 0>{weft::detail::as_expr(x),
                                                                                            {}};
  }
}

template <class E, class Mask>
struct expression_for;
template <class E, bool... B>
struct expression_for<E, BoolList<B...>> {
  using type = Expression<E, B...>;
};

/// The plain expression `build(operands...)` over the unwrapped operands, with their Var leaves
/// concatenated in operand order (the preorder of the result, as every builder puts its
/// operands in order under one new node).
template <class... Parts, class Build>
auto combine(Build build, const Parts&... parts) {
  auto plain = build(parts.expr...);
  using Mask = typename concat_bools<typename Parts::mask...>::type;
  typename expression_for<decltype(plain), Mask>::type result{plain, {}};
  std::size_t at = 0;
  ((std::copy(parts.nodes.begin(), parts.nodes.end(), result.nodes.begin() + std::ptrdiff_t(at)),
    at += parts.nodes.size()),
   ...);
  return result;
}

/// op(xs...) over autograd operands.
template <class Op, class... Xs>
auto ad_map(const Xs&... xs) {
  return combine([](const auto&... e) { return weft::detail::make_map<Op>(e...); }, unwrap(xs)...);
}

/// The plain value of an operand that carries no gradient (a comparison's operands): Vars as
/// their values.
template <class X>
auto plain(const X& x) {
  if constexpr (Tracked<X>) return unwrap(x).expr;
  else return weft::detail::as_expr(x);
}

// ---- backprop: the gradient of each Var leaf, derived from the expression's type ----------------

/// Whether leaves [first, first + count) of the mask hold a Var.
template <class Mask>
constexpr bool any_tracked(std::size_t first, std::size_t count) {
  for (std::size_t i = first; i < first + count; ++i)
    if (Mask::bits[i]) return true;
  return false;
}

template <std::size_t kFirst, class Mask, class N, class G, std::size_t... K>
auto backprop_operands(const N& node, const G& g, std::index_sequence<K...>);

/// The contributions of a subtree whose first leaf is leaf kFirst of the whole expression: for
/// each Var leaf in it (in preorder), the gradient `g` (the gradient of the subtree's value)
/// pushes down to it, as a std::tuple of plain expressions.
template <std::size_t kFirst, class Mask, class N, class G>
auto backprop(const N& node, const G& g) {
  if constexpr (!any_tracked<Mask>(kFirst, leaf_count_v<N>)) {
    return std::tuple<>{};
  } else if constexpr (weft::detail::is_instance_v<N, Leaf>) {
    return std::tuple<G>{g};
  } else if constexpr (weft::detail::is_cast_v<N>) {
    return backprop<kFirst, Mask>(node.arg, g);  // d cast(x) = dx (the statement rounds into the Var's dtype)
  } else {
    static_assert(weft::detail::is_map_v<N>, "weft::ad: this node kind has no derivative");
    return backprop_operands<kFirst, Mask>(node, g, std::make_index_sequence<N::children::size>{});
  }
}

/// The index of an operand's first leaf in the whole expression: `first` (its node's first leaf)
/// plus the leaves of the operands before it.
template <class Children>
struct operand_leaves;
template <class... Args>
struct operand_leaves<weft::detail::TypeList<Args...>> {
  static constexpr std::size_t first(std::size_t first, std::size_t k) {
    constexpr std::array<std::size_t, sizeof...(Args) + 1> counts{leaf_count_v<Args>..., 0};
    for (std::size_t i = 0; i < k; ++i) first += counts[i];
    return first;
  }
};

/// Map<Op, Args...>: operand K gets Derivative<Op>::of<K>(g, operands...).
template <std::size_t kFirst, class Mask, class N, class G, std::size_t... K>
auto backprop_operands(const N& node, const G& g, std::index_sequence<K...>) {
  auto operand_gradient = [&]<std::size_t k>(std::integral_constant<std::size_t, k>) {
    const auto& operand = weft::detail::get<k>(node.args);
    using Operand = std::remove_cvref_t<decltype(operand)>;
    constexpr std::size_t first = operand_leaves<typename N::children>::first(kFirst, k);
    if constexpr (!any_tracked<Mask>(first, leaf_count_v<Operand>)) {
      return std::tuple<>{};
    } else {
      using Op = typename N::op_type;
      auto dk = Derivative<Op>::template of<int(k)>(g, weft::detail::get<K>(node.args)...);
      return backprop<first, Mask>(operand, weft::detail::as_expr(dk));
    }
  };
  return std::tuple_cat(operand_gradient(std::integral_constant<std::size_t, K>{})...);
}

template <class Nodes>
struct leaf_dtypes;
template <class... M>
struct leaf_dtypes<weft::detail::TypeList<M...>> {
  using type = weft::detail::concat_t<std::conditional_t<weft::detail::is_instance_v<M, Leaf>,
                                                         weft::detail::TypeList<typename M::value_type>,
                                                         weft::detail::TypeList<>>...>;
};
template <class Mask, std::size_t I, class Leaves>
struct select_tracked {
  using type = weft::detail::TypeList<>;
};
template <class Mask, std::size_t I, class L, class... Ls>
struct select_tracked<Mask, I, weft::detail::TypeList<L, Ls...>> {
  using rest = typename select_tracked<Mask, I + 1, weft::detail::TypeList<Ls...>>::type;
  using type = std::conditional_t<Mask::bits[I], weft::detail::concat_t<weft::detail::TypeList<L>, rest>, rest>;
};
/// The dtypes of E's Var leaves (Mask), in preorder: the dtypes of their gradients.
template <class E, class Mask>
using tracked_dtypes_t =
    typename select_tracked<Mask, 0, typename leaf_dtypes<weft::detail::preorder_t<E>>::type>::type;

template <class List>
struct tensor_tuples;
template <class... T>
struct tensor_tuples<weft::detail::TypeList<T...>> {
  using tensors = std::tuple<Tensor<T>...>;
  using views = std::tuple<TensorView<T>...>;
};

/// The shapes at which E reads its Var leaves (Mask), in preorder.
template <class Mask, class E>
std::vector<Shape> tracked_leaf_shapes(const E& expr) {
  std::vector<Shape> shapes;
  std::size_t index = 0;
  weft::detail::for_each_leaf(expr, [&](const auto& leaf) {
    if (Mask::bits[index++]) shapes.push_back(leaf.tensor.shape());
  });
  return shapes;
}

/// The shape a plain expression evaluates to: its tensors' shapes broadcast together.
template <class E>
Shape expression_shape(const E& expr) {
  Shape out;
  bool ok = true;
  weft::detail::for_each_leaf(expr, [&](const auto& leaf) { ok = ok && weft::broadcast_into(out, leaf.tensor.shape()); });
  if (!ok) {
    std::vector<Shape> shapes;
    weft::detail::for_each_leaf(expr, [&](const auto& leaf) { shapes.push_back(leaf.tensor.shape()); });
    weft::fail_broadcast("ad", shapes);
  }
  return out;
}

/// The dims of `out` that an operand of shape `to` was broadcast along (numpy's rule backwards:
/// the leading dims `to` lacks, and the dims where `to` has 1).
inline std::vector<std::int64_t> broadcast_dims(const Shape& out, const Shape& to) {
  std::vector<std::int64_t> dims;
  const int lead = out.rank() - to.rank();
  for (int d = 0; d < out.rank(); ++d)
    if (d < lead || (to[d - lead] == 1 && out[d] != 1)) dims.push_back(d);
  return dims;
}

/// `g` summed over broadcast_dims(g's shape, to), into a new tensor of shape `to`.
template <class T>
Tensor<T> sum_over_broadcast(const TensorView<const T>& g, const Shape& to) {
  const std::vector<std::int64_t> dims = broadcast_dims(g.shape(), to);
  Shape kept = g.shape();
  for (std::int64_t d : dims) kept[int(d)] = 1;
  Tensor<T> summed = weft::empty<T>(to, g.device());
  if (dims.empty()) summed.view(kept) = g;
  else summed.view(kept) = weft::sum(g, dims, true);
  return summed;
}

/// The gradient of an operand of shape `to` that the forward broadcast to g's shape: g itself
/// (moved) where nothing was broadcast, else summed back (sum_over_broadcast).
template <class T>
Tensor<T> sum_to_shape(Tensor<T>&& g, const Shape& to) {
  if (broadcast_dims(g.shape(), to).empty() && g.shape() == to) return std::move(g);
  return sum_over_broadcast<T>(g.view(), to);
}

/// Runs the backward of a pointwise expression: `g` is the gradient of its value, as a plain
/// expression that broadcasts to `out` (the expression's shape); `nodes` are the Vars read by
/// the expression's Var leaves (Mask), in order. ONE fused kernel writes every contribution:
/// straight into the Var's grad() where the Var was read at the expression's full shape (the
/// first time it is read), else into a scratch of shape `out` that is then summed to the Var's
/// shape and added (an operand the forward broadcast, a Var read twice, a Var that needs no
/// gradient).
template <class Mask, class E, class G, std::size_t N>
void run_pointwise_backward(const E& expr, const G& g, const Shape& out,
                            const std::array<std::shared_ptr<NodeBase>, N>& nodes) {
  auto contributions = backprop<0, Mask>(expr, g);
  static_assert(std::tuple_size_v<decltype(contributions)> == N);
  using Dtypes = tracked_dtypes_t<E, Mask>;
  const std::vector<Shape> read_shapes = tracked_leaf_shapes<Mask>(expr);
  Device device = Device::cpu();
  weft::detail::for_each_leaf(expr, [&](const auto& leaf) { device = leaf.tensor.device(); });
  // Per Var leaf j: where its contribution goes (the Var's grad, or a scratch), and whether that
  // destination already holds a gradient to add to.
  typename tensor_tuples<Dtypes>::tensors scratch;
  std::array<bool, N> accumulate{};
  std::array<bool, N> direct{};
  [&]<std::size_t... J>(std::index_sequence<J...>) {
    auto choose = [&]<std::size_t j>(std::integral_constant<std::size_t, j>) {
      using T = typename std::tuple_element_t<j, decltype(scratch)>::value_type;
      auto& node = static_cast<Node<T>&>(*nodes[j]);
      bool first_reading = true;
      for (std::size_t i = 0; i < j; ++i) first_reading = first_reading && nodes[i].get() != nodes[j].get();
      direct[j] = node.requires_grad && first_reading && read_shapes[j] == out;
      if (direct[j]) {
        accumulate[j] = node.grad.defined();
        if (!accumulate[j]) node.grad = weft::empty<T>(out, device);
        return node.grad.view();
      }
      std::get<j>(scratch) = weft::empty<T>(out, device);
      return std::get<j>(scratch).view();
    };
    // Braced initialization runs left to right: a Var's first reading is decided first.
    const typename tensor_tuples<Dtypes>::views destination{choose(std::integral_constant<std::size_t, J>{})...};
    // A destination that holds no gradient yet is written without being read (its elements are
    // not initialized): the common case of a graph's intermediates, where reading them would
    // add a third to the kernel's memory traffic. Where some Var accumulates, each statement
    // keeps or drops its old value by a select.
    if (std::none_of(accumulate.begin(), accumulate.end(), [](bool a) { return a; }))
      weft::fuse(weft::assign(std::get<J>(destination), std::get<J>(contributions))...);
    else
      weft::fuse(weft::assign(std::get<J>(destination),
                              weft::where(accumulate[J], std::get<J>(destination), 0.0) + std::get<J>(contributions))...);
    auto add_back = [&]<std::size_t j>(std::integral_constant<std::size_t, j>) {
      using T = typename std::tuple_element_t<j, decltype(scratch)>::value_type;
      auto& node = static_cast<Node<T>&>(*nodes[j]);
      if (direct[j] || !node.requires_grad) return;
      Tensor<T>& contribution = std::get<j>(scratch);
      if (!(read_shapes[j] == out)) contribution = sum_over_broadcast<T>(contribution.view(), read_shapes[j]);
      if (node.grad.defined()) node.grad += contribution;
      else node.grad = std::move(contribution);
    };
    (add_back(std::integral_constant<std::size_t, J>{}), ...);
  }(std::make_index_sequence<N>{});
}

}  // namespace detail

/// A pointwise expression that reads Vars: `expr` is the plain weft expression (each Var's value
/// as a Leaf), kTracked says which of its leaves (preorder) are Vars, `nodes` are those Vars'
/// nodes in order. Assigning it to a Var evaluates and records it.
template <class E, bool... kTracked>
struct Expression {
  static_assert(sizeof...(kTracked) == detail::leaf_count_v<E>);
  using value_type = typename E::value_type;
  using mask = detail::BoolList<kTracked...>;
  static constexpr std::size_t kNodes = (std::size_t(0) + ... + std::size_t(kTracked));

  E expr;
  std::array<std::shared_ptr<detail::NodeBase>, kNodes> nodes;

  /// Evaluates the expression (one kernel) into a node of dtype T whose backward is one kernel.
  template <class T>
  std::shared_ptr<detail::Node<T>> record() const {
    auto node = std::make_shared<detail::Node<T>>();
    node->op = "pointwise";
    Tensor<T> value;
    value = expr;
    node->value = std::move(value);
    if (!detail::recording_for(nodes)) return node;
    node->requires_grad = true;
    node->parents.assign(nodes.begin(), nodes.end());
    detail::SavedTensors saved(expr);
    detail::Node<T>* self = node.get();
    node->backward_step = [self, expr = expr, nodes = nodes, saved = std::move(saved)] {
      saved.check("pointwise");
      detail::run_pointwise_backward<mask>(expr, Leaf<T>{{}, TensorView<const T>(self->grad.view())},
                                           self->value.shape(), nodes);
    };
    return node;
  }
};

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::ad

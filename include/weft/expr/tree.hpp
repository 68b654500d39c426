// SPDX-License-Identifier: MIT
/// @file Walks over expression trees: the node types of a tree (preorder_t) and folds over them at compile time
/// (tree_sum, tree_max, tree_all), and visits of a tree's nodes at run time.
///
/// A node type says only what it holds and which operand types it has (`children`, expr/nodes.hpp). A property of
/// a tree is one fold with one per-node term, written where the property is used: the node count is
/// `tree_sum<N>(one per node)`, the CUDA vector width `tree_max<N>(bytes of each tensor read)`. No property
/// specializes a template per node kind, so a new node kind needs only its `children`.
#pragma once

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "weft/core/tuple.hpp"
#include "weft/expr/nodes.hpp"

namespace weft::detail {

template <class N>
inline constexpr bool is_leaf_v = is_instance_v<N, Leaf> || is_instance_v<N, ListLeaf>;

template <class N>
inline constexpr bool is_map_v = is_instance_v<N, Map>;

template <class N>
inline constexpr bool is_cast_v = is_instance_v<N, Cast>;

/// The node types of N's tree, parents before operands, left to right (the order kernels evaluate in).
template <class N, class Children = typename N::children>
struct preorder;
template <class N, class... C>
struct preorder<N, TypeList<C...>> {
  using type = concat_t<TypeList<N>, typename preorder<C>::type...>;
};
template <class N>
using preorder_t = typename preorder<N>::type;

/// The Map node types of a tree in preorder: the candidates for sharing one computed value.
template <class N, class Nodes = preorder_t<N>>
struct maps_in;
template <class... M>
struct MapNodes {
  static constexpr bool kept(std::size_t i) {
    constexpr bool map[] = {is_map_v<M>..., false};
    return map[i];
  }
};
template <class N, class... M>
struct maps_in<N, TypeList<M...>> {
  using type = typename select_types<MapNodes<M...>, M...>::type;
};
template <class N>
using maps_in_t = typename maps_in<N>::type;

/// sum over the nodes M of N's tree of term(std::type_identity<M>{}) (a term takes the node type as a tag:
/// `[]<class M>(std::type_identity<M>) { ... }`).
template <class N, class Term>
consteval std::size_t tree_sum(Term term) {
  return [&]<class... M>(TypeList<M...>) {
    const std::size_t terms[] = {std::size_t(term(std::type_identity<M>{}))..., 0};  // not a fold: core/tuple.hpp
    std::size_t sum = 0;
    for (std::size_t t : terms) sum += t;
    return sum;
  }(preorder_t<N>{});
}

/// max over the nodes M of N's tree of term(std::type_identity<M>{}) (0 for none).
template <class N, class Term>
consteval std::size_t tree_max(Term term) {
  return [&]<class... M>(TypeList<M...>) {
    return std::max({std::size_t(0), std::size_t(term(std::type_identity<M>{}))...});
  }(preorder_t<N>{});
}

/// Whether term(std::type_identity<M>{}) holds for every node M of N's tree.
template <class N, class Term>
consteval bool tree_all(Term term) {
  return [&]<class... M>(TypeList<M...>) {
    const bool holds[] = {bool(term(std::type_identity<M>{}))..., true};  // not a fold: core/tuple.hpp
    for (bool h : holds)
      if (!h) return false;
    return true;
  }(preorder_t<N>{});
}

/// Calls f(child) for each operand node of `node`, left to right.
template <class Node, class F>
void for_each_child(Node& node, F&& f) {
  if constexpr (is_map_v<std::remove_const_t<Node>>) for_each_in(node.args, f);
  else if constexpr (is_cast_v<std::remove_const_t<Node>>) f(node.arg);
}

/// Calls f(node) for every node of the tree, in preorder.
template <class Node, class F>
void visit_nodes(Node& node, F&& f) {
  f(node);
  for_each_child(node, [&](auto& child) { visit_nodes(child, f); });
}

/// Calls f(leaf) for every single-tensor Leaf in the tree, left to right.
template <class Node, class F>
void for_each_leaf(Node& node, F&& f) {
  visit_nodes(node, [&](auto& n) {
    if constexpr (requires { n.tensor; }) f(n);
  });
}

/// Structural equality: same tensors (address, shape, strides), lists, numbers and ops.
template <class Node>
bool same_tree(const Node& a, const Node& b) {
  if constexpr (is_map_v<Node>) {
    return [&]<std::size_t... Is>(std::index_sequence<Is...>) {
      return (same_tree(get<Is>(a.args), get<Is>(b.args)) && ...);
    }(std::make_index_sequence<decltype(a.args)::size>{});
  } else if constexpr (is_cast_v<Node>) {
    return same_tree(a.arg, b.arg);
  } else if constexpr (requires { a.tensor; }) {
    return a.tensor.data() == b.tensor.data() && a.tensor.shape() == b.tensor.shape() &&
           a.tensor.strides() == b.tensor.strides();
  } else if constexpr (requires { a.source; }) {
    return a.source == b.source;
  } else if constexpr (requires { a.list; }) {
    return a.list.id() == b.list.id();
  } else if constexpr (requires { a.values; }) {
    return a.values.id() == b.values.id();
  } else {
    return a.value == b.value;
  }
}

}  // namespace weft::detail

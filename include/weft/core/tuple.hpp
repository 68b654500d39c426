// SPDX-License-Identifier: MIT
/// @file A minimal tuple usable in CUDA device code (std::tuple's members are host-only there), type lists, and is_instance_v.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include "weft/core/config.hpp"

namespace weft::detail {

template <std::size_t I, class T>
struct TupleSlot {
  [[no_unique_address]] T value;
};

template <class Indices, class... Ts>
struct TupleBase;

template <std::size_t... Is, class... Ts>
struct TupleBase<std::index_sequence<Is...>, Ts...> : TupleSlot<Is, Ts>... {};

/// Aggregate tuple: Tuple<A, B>{{{a}, {b}}} (Tuple, its base, a slot per element: Tuple<A, B>{a, b}
/// works too, but clang's -Wall flags that brace elision); get<I>(t). Braced initialization runs
/// left to right.
template <class... Ts>
struct Tuple : TupleBase<std::index_sequence_for<Ts...>, Ts...> {
  static constexpr std::size_t size = sizeof...(Ts);
};

template <std::size_t I, class T>
WEFT_HOST_DEVICE constexpr T& get(TupleSlot<I, T>& slot) {
  return slot.value;
}
template <std::size_t I, class T>
WEFT_HOST_DEVICE constexpr const T& get(const TupleSlot<I, T>& slot) {
  return slot.value;
}

template <std::size_t I, class Tup>
using tuple_element_t = std::remove_cvref_t<decltype(get<I>(std::declval<Tup&>()))>;

/// Calls f(get<0>(t)), f(get<1>(t)), ... in order.
template <class Tup, class F>
WEFT_HOST_DEVICE constexpr void for_each_in(Tup& t, F&& f) {
  [&]<std::size_t... Is>(std::index_sequence<Is...>) { (f(get<Is>(t)), ...); }(std::make_index_sequence<Tup::size>{});
}

/// A compile-time list of types.
template <class... Ts>
struct TypeList {
  static constexpr std::size_t size = sizeof...(Ts);
};

template <class... Lists>
struct concat;
template <>
struct concat<> {
  using type = TypeList<>;
};
template <class... As>
struct concat<TypeList<As...>> {
  using type = TypeList<As...>;
};
template <class... As, class... Bs, class... Rest>
struct concat<TypeList<As...>, TypeList<Bs...>, Rest...> {
  using type = typename concat<TypeList<As..., Bs...>, Rest...>::type;
};
template <class... Lists>
using concat_t = typename concat<Lists...>::type;

// The list walks below loop over an array rather than fold over the pack: a fold nests one
// expression per element, and clang refuses more than 256 levels (a backward kernel's statements
// hold hundreds of nodes).

/// A type tagged with its index in a list, so that overload resolution finds Ts[I] among the bases
/// of IndexedTypes (indexed_type<I>, declared for decltype only) without walking the list.
template <std::size_t I, class T>
struct IndexedType {};
template <class Indices, class... Ts>
struct IndexedTypes;
template <std::size_t... Is, class... Ts>
struct IndexedTypes<std::index_sequence<Is...>, Ts...> : IndexedType<Is, Ts>... {};
template <std::size_t I, class T>
std::type_identity<T> indexed_type(const IndexedType<I, T>&);

/// TypeList of the Ts[i] for which Keep::kept(i) holds, in order (a filter). One class per list:
/// a recursive walk instantiates a class per element, each naming the rest of the list, so a list
/// of n nodes costs n^2 (an autograd tree's backward kernels, hundreds of nodes: 5-6% of its
/// file's front end).
template <class Keep, class... Ts>
struct select_types {
 private:
  static constexpr std::size_t kCount = [] {
    std::size_t n = 0;
    for (int i = 0; i < int(sizeof...(Ts)); ++i) n += Keep::kept(std::size_t(i)) ? 1 : 0;
    return n;
  }();
  struct Positions {
    std::size_t at[kCount + 1];
  };
  static constexpr Positions kPositions = [] {
    Positions p{};
    std::size_t k = 0;
    for (int i = 0; i < int(sizeof...(Ts)); ++i)
      if (Keep::kept(std::size_t(i))) p.at[k++] = std::size_t(i);
    return p;
  }();
  template <std::size_t... K>
  static auto pick(std::index_sequence<K...>)
      -> TypeList<typename decltype(indexed_type<kPositions.at[K]>(
          std::declval<const IndexedTypes<std::index_sequence_for<Ts...>, Ts...>&>()))::type...>;

 public:
  using type = decltype(pick(std::make_index_sequence<kCount>{}));
};

/// Number of times T occurs in List.
template <class T, class List>
inline constexpr int count_in = 0;
template <class T, class... Ts>
inline constexpr int count_in<T, TypeList<Ts...>> = [] {
  constexpr bool same[] = {std::is_same_v<T, Ts>..., false};
  int n = 0;
  for (bool s : same) n += int(s);
  return n;
}();

/// Index of the first T in List, or -1.
template <class T, class List>
inline constexpr int index_in = -1;
template <class T, class... Ts>
inline constexpr int index_in<T, TypeList<Ts...>> = [] {
  constexpr bool same[] = {std::is_same_v<T, Ts>..., false};
  for (int i = 0; i < int(sizeof...(Ts)); ++i)
    if (same[i]) return i;
  return -1;
}();

/// Whether X is an instance of the class template Tmpl (Tensor<float> of Tensor, Map<Op, A, B> of Map).
template <class X, template <class...> class Tmpl>
inline constexpr bool is_instance_v = false;
template <template <class...> class Tmpl, class... Args>
inline constexpr bool is_instance_v<Tmpl<Args...>, Tmpl> = true;

}  // namespace weft::detail

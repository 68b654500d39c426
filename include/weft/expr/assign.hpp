// SPDX-License-Identifier: MIT
/// @file Statements: weft::assign(dst, x) builds `dst = x` for weft::fuse; what a statement holds and the dtype rule of its destination.
#pragma once

#include <type_traits>

#include "weft/expr/operators.hpp"

namespace weft {

/// One statement of a fused kernel: `dst = rhs` (built by weft::assign). A view destination keeps
/// its shape; a Tensor destination (`owner`) is reallocated first when the right-hand side's
/// shape differs (backend/run.hpp: run_statements), and `dst` then views the new elements.
template <Element T, class E>
struct Assignment {
  using dest_type = T;
  using expr_type = E;
  TensorView<T> dst;
  Tensor<T>* owner = nullptr;  // a Tensor destination of `=`: it takes the right-hand side's shape
  E rhs;
};

/// One statement of a foreach kernel: every tensor k of `*dst` gets rhs at k.
template <Element T, class E>
struct ListAssignment {
  using dest_type = T;
  using expr_type = E;
  TensorList<T>* dst;
  E rhs;
};

namespace detail {
/// The one-line compile error for a destination that cannot hold the result (torch.can_cast).
template <class From, class To>
constexpr void check_can_cast() {
  static_assert(can_cast_v<From, To>,
                "weft: the destination's dtype cannot hold this result (floating into integer/bool, or integer into "
                "bool; torch.can_cast is false): convert explicitly with weft::cast<U>(expr)");
}
}  // namespace detail

/// One statement for weft::fuse: dst = x. A Tensor takes x's shape (reallocated when it differs);
/// a view keeps its shape and x broadcasts to it.
template <Element T, Operand X>
Assignment<T, detail::expr_t<X>> assign(Tensor<T>& dst, const X& x) {
  detail::check_can_cast<typename detail::expr_t<X>::value_type, T>();
  return {dst.view(), &dst, detail::as_expr(x)};
}
template <Element T, Operand X>
Assignment<T, detail::expr_t<X>> assign(const TensorView<T>& dst, const X& x) {
  detail::check_can_cast<typename detail::expr_t<X>::value_type, T>();
  return {dst, nullptr, detail::as_expr(x)};
}

/// One statement over lists: every tensor k of dst gets x at k.
template <Element T, Operand X>
ListAssignment<T, detail::expr_t<X>> assign(TensorList<T>& dst, const X& x) {
  detail::check_can_cast<typename detail::expr_t<X>::value_type, T>();
  return {&dst, detail::as_expr(x)};
}

template <class A>
inline constexpr bool is_assignment_v = detail::is_instance_v<A, Assignment>;

template <class A>
inline constexpr bool is_list_assignment_v = detail::is_instance_v<A, ListAssignment>;

}  // namespace weft

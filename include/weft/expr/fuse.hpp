// SPDX-License-Identifier: MIT
/// @file assign, fuse and eval: the statements users write, and Tensor's assignment operators.
#pragma once

#include <type_traits>

#include "weft/expr/operators.hpp"
#include "weft/plan/foreach.hpp"
#include "weft/plan/run.hpp"

namespace weft {

/// One statement for weft::fuse: dst = x (dst may be empty: it gets x's shape).
template <Element T, Operand X>
Assignment<T, detail::expr_t<X>> assign(Tensor<T>& dst, const X& x) {
  return {&dst, detail::as_expr(x)};
}

/// One statement over lists: every tensor k of dst gets x at k.
template <Element T, Operand X>
ListAssignment<T, detail::expr_t<X>> assign(TensorList<T>& dst, const X& x) {
  return {&dst, detail::as_expr(x)};
}

template <class A>
inline constexpr bool is_assignment_v = false;
template <class T, class E>
inline constexpr bool is_assignment_v<Assignment<T, E>> = true;

template <class A>
inline constexpr bool is_list_assignment_v = false;
template <class T, class E>
inline constexpr bool is_list_assignment_v<ListAssignment<T, E>> = true;

inline namespace WEFT_BACKEND_ABI {

/// Runs several assignments as ONE kernel. Every right-hand side reads the
/// values from before the call; a subexpression shared by C++ name (or
/// written identically) is computed once per element.
template <class... As>
void fuse(As... statements) {
  static_assert(sizeof...(As) > 0, "weft::fuse needs at least one weft::assign(dst, expr)");
  static_assert((is_assignment_v<As> && ...) || (is_list_assignment_v<As> && ...),
                "weft::fuse takes statements made by weft::assign(dst, expr), all into tensors or all into "
                "TensorLists");
  if constexpr ((is_list_assignment_v<As> && ...)) detail::run_list_statements("fuse", statements...);
  else detail::run_statements("fuse", statements...);
}

/// Evaluates an expression into a new contiguous tensor of its dtype.
template <Expression E>
Tensor<typename E::value_type> eval(const E& e) {
  Tensor<typename E::value_type> out;
  auto statement = assign(out, e);
  detail::run_statements("eval", statement);
  return out;
}

}  // namespace WEFT_BACKEND_ABI

namespace detail {
inline namespace WEFT_BACKEND_ABI {

template <AssignKind kind, class T, class Source>
void assign_into(Tensor<T>& dst, const Source& source) {
  static_assert(Operand<Source>, "weft: a tensor can be assigned a weft::Tensor, a weft expression or a number");
  if (kind != AssignKind::set && !dst.defined())
    fail("assign", "compound assignment (+=, -=, *=, /=) into an empty tensor; assign it a value first");
  auto run = [&](auto rhs) {
    Assignment<T, decltype(rhs)> statement{&dst, rhs};
    run_statements("assign", statement);
  };
  if constexpr (kind == AssignKind::set) run(as_expr(source));
  else if constexpr (kind == AssignKind::add) run(dst + source);
  else if constexpr (kind == AssignKind::sub) run(dst - source);
  else if constexpr (kind == AssignKind::mul) run(dst * source);
  else run(dst / source);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail
}  // namespace weft

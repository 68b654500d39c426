// SPDX-License-Identifier: MIT
/// @file assign, fuse and eval: the statements users write, and Tensor's assignment operators.
#pragma once

#include <type_traits>

#include "weft/expr/operators.hpp"
#include "weft/plan/foreach.hpp"
#include "weft/plan/run.hpp"

namespace weft {

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

/// Evaluates an expression (or copies a view) into a new contiguous tensor of its dtype.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<typename detail::expr_t<X>::value_type> eval(const X& x) {
  Tensor<typename detail::expr_t<X>::value_type> out;
  auto statement = assign(out, x);
  detail::run_statements("eval", statement);
  return out;
}

}  // namespace WEFT_BACKEND_ABI

namespace detail {
inline namespace WEFT_BACKEND_ABI {

/// dst op= source as one statement (set: dst = source). `owner` is the Tensor behind dst when its
/// shape follows the source's (Tensor's operator=), else null.
template <AssignKind kind, class T, class Source>
void assign_statement(const TensorView<T>& dst, std::type_identity_t<Tensor<T>>* owner, const Source& source) {
  static_assert(Operand<Source> && !TensorListLike<Source>,
                "weft: a tensor can be assigned a weft::Tensor or TensorView, a weft expression or a number");
  if (kind != AssignKind::set && !dst.defined())
    fail("assign", "compound assignment (+=, -=, *=, /=) into an empty tensor; assign it a value first");
  auto run = [&](auto rhs) {
    check_can_cast<typename decltype(rhs)::value_type, T>();
    Assignment<T, decltype(rhs)> statement{dst, kind == AssignKind::set ? owner : nullptr, rhs};
    run_statements("assign", statement);
  };
  if constexpr (kind == AssignKind::set) run(as_expr(source));
  else if constexpr (kind == AssignKind::add) run(dst + source);
  else if constexpr (kind == AssignKind::sub) run(dst - source);
  else if constexpr (kind == AssignKind::mul) run(dst * source);
  else run(dst / source);
}

template <AssignKind kind, class T, class Source>
void assign_into(TensorView<T>& dst, const Source& source) {
  assign_statement<kind>(dst, nullptr, source);
}

template <AssignKind kind, class T, class Source>
void assign_into(Tensor<T>& dst, const Source& source) {
  assign_statement<kind>(dst.view(), &dst, source);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail
}  // namespace weft

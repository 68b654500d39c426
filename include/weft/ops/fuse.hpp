// SPDX-License-Identifier: MIT
/// @file fuse, eval and the assignment operators of Tensor, TensorView and TensorList: statements checked, planned and run as one kernel.
#pragma once

#include "weft/backend/multi_shape.hpp"
#include "weft/backend/run.hpp"
#include "weft/expr/assign.hpp"

namespace weft {

namespace detail {
/// Counts a write into each destination's storage (Storage::version, which autograd checks).
template <class T, class E>
void count_write(const Assignment<T, E>& statement) {
  if (statement.dst.defined()) statement.dst.storage()->count_write();
}
template <class T, class E>
void count_write(const ListAssignment<T, E>& statement) {
  for (const TensorView<T>& member : *statement.dst)
    if (member.defined()) member.storage()->count_write();
}
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// Runs several assignments as ONE kernel. Every right-hand side reads the
/// values from before the call; a subexpression shared by C++ name (or
/// written identically) is computed once per element. Statements into tensors
/// of different shapes run as one multi-shape kernel (each statement its own
/// loop, no subexpression shared between them; docs/dense.md).
template <class... As>
void fuse(As... statements) {
  static_assert(sizeof...(As) > 0, "weft::fuse needs at least one weft::assign(dst, expr)");
  static_assert((is_assignment_v<As> && ...) || (is_list_assignment_v<As> && ...),
                "weft::fuse takes statements made by weft::assign(dst, expr), all into tensors or all into "
                "TensorLists");
  if constexpr ((is_list_assignment_v<As> && ...)) detail::run_foreach_statements("fuse", statements...);
  else detail::run_fused_statements("fuse", statements...);
  (detail::count_write(statements), ...);
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

/// The right-hand side of `dst op= source`: source itself (set), else dst op source.
template <AssignKind kind, class Dst, class Source>
auto assigned_value(const Dst& dst, const Source& source) {
  if constexpr (kind == AssignKind::set) return as_expr(source);
  else if constexpr (kind == AssignKind::add) return dst + source;
  else if constexpr (kind == AssignKind::sub) return dst - source;
  else if constexpr (kind == AssignKind::mul) return dst * source;
  else return dst / source;
}

/// dst op= source as one statement. `owner` is the Tensor behind dst when its shape follows the
/// source's (Tensor's operator=), else null.
template <AssignKind kind, class T, class Source>
void assign_statement(const TensorView<T>& dst, std::type_identity_t<Tensor<T>>* owner, const Source& source) {
  static_assert(Operand<Source> && !TensorListLike<Source>,
                "weft: a tensor can be assigned a weft::Tensor or TensorView, a weft expression or a number");
  if (kind != AssignKind::set && !dst.defined())
    fail("assign", "compound assignment (+=, -=, *=, /=) into an empty tensor; assign it a value first");
  const auto rhs = assigned_value<kind>(dst, source);
  check_can_cast<typename decltype(rhs)::value_type, T>();
  Assignment<T, std::remove_const_t<decltype(rhs)>> statement{dst, kind == AssignKind::set ? owner : nullptr, rhs};
  run_statements("assign", statement);
  count_write(statement);
}

template <AssignKind kind, class T, class Source>
void assign_into(TensorView<T>& dst, const Source& source) {
  assign_statement<kind>(dst, nullptr, source);
}

template <AssignKind kind, class T, class Source>
void assign_into(Tensor<T>& dst, const Source& source) {
  assign_statement<kind>(dst.view(), &dst, source);
}

/// Every tensor k of dst op= source at k, in one foreach kernel.
template <AssignKind kind, class T, class Source>
void assign_into(TensorList<T>& dst, const Source& source) {
  static_assert(Operand<Source>, "weft: a TensorList can be assigned a list expression, a TensorList or a number");
  const auto rhs = assigned_value<kind>(dst, source);
  check_can_cast<typename decltype(rhs)::value_type, T>();
  ListAssignment<T, std::remove_const_t<decltype(rhs)>> statement{&dst, rhs};
  run_foreach_statements("foreach", statement);
  count_write(statement);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail
}  // namespace weft

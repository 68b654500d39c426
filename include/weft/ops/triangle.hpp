// SPDX-License-Identifier: MIT
/// @file tril and triu: the lower or upper triangle of the last two dims, the rest zero, as pointwise expressions over row and column indices.
#pragma once

#include <cstdint>

#include "weft/ops/indexing.hpp"
#include "weft/ops/join.hpp"

namespace weft {
namespace detail {
inline namespace WEFT_BACKEND_ABI {

/// cols - rows over the last two dims of x's shape: element (i, j) holds j - i, from an [m, 1]
/// and an [n] int64 arange that broadcast (m + n elements; no index leaf is needed). Checks x.
template <class E>
auto column_minus_row(const char* op, const E& x) {
  const CatOperand operand = cat_operand(op, 0, x);
  const Shape& s = operand.shape();
  if (s.rank() < 2)
    fail(op, "needs an input of at least 2 dims (a matrix or a batch of them), got shape ", s);
  check_executor_for(op, operand.device());
  const std::int64_t m = s[s.rank() - 2], n = s[s.rank() - 1];
  return arange<std::int64_t>(n, operand.device()) - arange<std::int64_t>(m, operand.device()).view({m, 1});
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// tril(x, k)[..., i, j] = x[..., i, j] where j - i <= k, else 0 (torch.tril): the lower triangle
/// of the last two dims, batched over the others; k > 0 keeps diagonals above the main one, k < 0
/// drops some below it. An expression, where(j - i <= k, x, 0), over x and two small aranges:
/// nothing runs until it is assigned, and it fuses with the expression around it (`y = tril(a) *
/// 2` is one kernel) and with an expression x. A weft::Error for fewer than 2 dims.
template <Operand X>
  requires HasTensorOperand<X>
auto tril(const X& x, std::int64_t k = 0) {
  const auto e = detail::as_expr(x);
  return where(detail::column_minus_row("tril", e) <= k, e, detail::number_of_kind<detail::operand_dtype_t<X>>("tril", 0));
}

/// triu(x, k)[..., i, j] = x[..., i, j] where j - i >= k, else 0 (torch.triu): the upper triangle,
/// as tril.
template <Operand X>
  requires HasTensorOperand<X>
auto triu(const X& x, std::int64_t k = 0) {
  const auto e = detail::as_expr(x);
  return where(detail::column_minus_row("triu", e) >= k, e, detail::number_of_kind<detail::operand_dtype_t<X>>("triu", 0));
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft

// SPDX-License-Identifier: MIT
/// @file sum and mean over Vars: the reduction runs as for tensors (the expression inside it fused, read once), and its backward broadcasts the gradient back through the same expression's derivative in ONE kernel.
///
/// d sum_R(f(x)) / dx = f'(x) * g broadcast over R, and mean's is that divided by the count: the
/// backward is the pointwise backward of f (ad/expression.hpp) with the reduced gradient read
/// at stride 0 along the reduced dims, so `sum(a * sigmoid(b))` has a one-kernel backward too.
#pragma once

#include <cstdint>
#include <vector>

#include "weft/ad/expression.hpp"
#include "weft/ad/record.hpp"
#include "weft/ops/reduce.hpp"

namespace weft {
namespace ad {
inline namespace WEFT_BACKEND_ABI {
namespace detail {

/// The reduced dims of a rank-`rank` input, wrapped and sorted (every dim for an empty list).
inline std::vector<int> reduced_dims(const char* op, const std::vector<std::int64_t>& dims, int rank) {
  std::vector<bool> reduced(std::size_t(rank), dims.empty());
  for (std::int64_t d : dims) reduced[std::size_t(weft::wrap_dim(op, d, rank))] = true;
  std::vector<int> out;
  for (int d = 0; d < rank; ++d)
    if (reduced[std::size_t(d)]) out.push_back(d);
  return out;
}

/// sum (kMean false) or mean of an autograd operand over `dims` (all of them when null).
template <bool kMean, class X>
auto reduce_recorded(const X& x, const std::vector<std::int64_t>* dims, bool keepdim) {
  const char* op = kMean ? "mean" : "sum";
  const auto part = unwrap(x);
  using Part = std::remove_cvref_t<decltype(part)>;
  using T = typename decltype(part.expr)::value_type;
  static_assert(is_floating_v<T>, "weft::ad: sum and mean of Vars need a floating-point dtype");
  const Shape in = expression_shape(part.expr);
  Tensor<T> value;
  if constexpr (kMean) {
    if (dims) value = weft::mean(part.expr, *dims, keepdim);
    else value = weft::mean(part.expr);
  } else {
    if (dims) value = weft::sum(part.expr, *dims, keepdim);
    else value = weft::sum(part.expr);
  }
  // The gradient's shape with the reduced dims kept as 1: it broadcasts back over them.
  Shape kept = in;
  std::int64_t count = 1;
  for (int d : reduced_dims(op, dims ? *dims : std::vector<std::int64_t>{}, in.rank())) {
    count *= in[d];
    kept[d] = 1;
  }
  const double scale = kMean ? 1.0 / double(count) : 1.0;
  return record_op<T>(op, std::move(value), part.nodes, SavedTensors(part.expr),
                      [expr = part.expr, nodes = part.nodes, in, kept, scale](const Tensor<T>& g) {
                        const Leaf<T> g_kept{{}, TensorView<const T>(g.view(kept))};
                        run_pointwise_backward<typename Part::mask>(expr, g_kept * scale, in, nodes);
                      });
}

}  // namespace detail
}  // namespace WEFT_BACKEND_ABI
}  // namespace ad

inline namespace WEFT_BACKEND_ABI {

/// sum of every element of an autograd operand: a one-element Var (a loss).
template <class X>
  requires ad::detail::AdOperands<X>
auto sum(const X& x) {
  return ad::detail::reduce_recorded<false>(x, nullptr, false);
}
/// sum over `dim`; keepdim leaves the reduced dims as size 1.
template <class X>
  requires ad::detail::AdOperands<X>
auto sum(const X& x, const DimList& dim, bool keepdim = false) {
  return ad::detail::reduce_recorded<false>(x, &dim.dims(), keepdim);
}
/// mean = sum / count, over every element.
template <class X>
  requires ad::detail::AdOperands<X>
auto mean(const X& x) {
  return ad::detail::reduce_recorded<true>(x, nullptr, false);
}
/// mean over `dim`; keepdim leaves the reduced dims as size 1.
template <class X>
  requires ad::detail::AdOperands<X>
auto mean(const X& x, const DimList& dim, bool keepdim = false) {
  return ad::detail::reduce_recorded<true>(x, &dim.dims(), keepdim);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft

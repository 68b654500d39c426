// SPDX-License-Identifier: MIT
/// @file The view ops over Vars (reshape, transpose, permute, unsqueeze, squeeze, expand, narrow, select) and their backward: the gradient viewed back (reshape, transpose, permute), summed back (expand) or placed back (narrow, select).
///
/// A Var's value is a contiguous tensor. A reshape (or unsqueeze, squeeze) of it shares its
/// elements, as a torch view does; the other views are copied into a contiguous value (a
/// strided Var would make every later op's kernel strided). matmul reads a transposed operand
/// without a copy (ad/matmul.hpp), so the common `x @ w^T` never copies w.
#pragma once

#include <cstdint>
#include <vector>

#include "weft/ad/record.hpp"

namespace weft::ad {

namespace detail {

/// The result of a view op over x: `view` of x's value, sharing x's elements when `share` (a
/// contiguous reshape), else copied; `back(g)` adds the gradient to x.
template <class T, class Back>
Var<T> record_view(const char* op, const Var<T>& x, const TensorView<const T>& view, bool share, Back back) {
  Tensor<T> value;
  if (share) value = Tensor<T>(weft::detail::AdoptStorage{}, x.value().storage(), view.shape());
  else value = view;
  return record_op<T>(op, std::move(value), std::array{std::shared_ptr<NodeBase>(x.node())}, SavedTensors(),
                      [node = x.node(), back](const Tensor<T>& g) { back(node, g); });
}

}  // namespace detail

/// x with a new shape (one -1 is inferred): the same elements; dx = dy reshaped back.
template <class T>
Var<T> reshape(const Var<T>& x, const Shape& shape) {
  const TensorView<const T> v = x.value().view().view(shape);
  const Shape in = x.shape();
  return detail::record_view<T>("reshape", x, v, true, [in](const auto& node, const Tensor<T>& g) {
    detail::accumulate<T>(node, g.view().view(in));
  });
}
/// x with dims d0 and d1 swapped; dx = dy with them swapped back.
template <class T>
Var<T> transpose(const Var<T>& x, std::int64_t d0, std::int64_t d1) {
  return detail::record_view<T>("transpose", x, x.value().view().transpose(d0, d1), false,
                                [d0, d1](const auto& node, const Tensor<T>& g) {
                                  detail::accumulate<T>(node, g.view().transpose(d0, d1));
                                });
}
/// out.shape[i] = x.shape[dims[i]]; dx = dy permuted by the inverse permutation.
template <class T>
Var<T> permute(const Var<T>& x, const std::vector<std::int64_t>& dims) {
  const TensorView<const T> v = x.value().view().permute(dims);
  std::vector<std::int64_t> inverse(dims.size());
  for (std::size_t i = 0; i < dims.size(); ++i)
    inverse[std::size_t(weft::wrap_dim("permute", dims[i], int(dims.size())))] = std::int64_t(i);
  return detail::record_view<T>("permute", x, v, false, [inverse](const auto& node, const Tensor<T>& g) {
    detail::accumulate<T>(node, g.view().permute(inverse));
  });
}
/// x with a size-1 dim inserted at `dim`; dx = dy without it.
template <class T>
Var<T> unsqueeze(const Var<T>& x, std::int64_t dim) {
  return reshape(x, x.value().view().unsqueeze(dim).shape());
}
/// x without dim when its extent is 1; dx = dy with it.
template <class T>
Var<T> squeeze(const Var<T>& x, std::int64_t dim) {
  return reshape(x, x.value().view().squeeze(dim).shape());
}
/// x broadcast to `shape` (size-1 and new leading dims repeat); dx = dy summed over them.
template <class T>
Var<T> expand(const Var<T>& x, const Shape& shape) {
  const Shape in = x.shape();
  return detail::record_view<T>("expand", x, x.value().view().expand(shape), false,
                                [in](const auto& node, const Tensor<T>& g) {
                                  detail::accumulate<T>(node, detail::sum_to_shape(g, in));
                                });
}
/// `length` elements of x from `start` along dim; dx is dy there and 0 elsewhere.
template <class T>
Var<T> narrow(const Var<T>& x, std::int64_t dim, std::int64_t start, std::int64_t length) {
  const Shape in = x.shape();
  return detail::record_view<T>(
      "narrow", x, x.value().view().narrow(dim, start, length), false,
      [in, dim, start, length](const auto& node, const Tensor<T>& g) {
        if (!node->requires_grad) return;
        auto& n = static_cast<detail::Node<T>&>(*node);
        if (!n.grad.defined()) n.grad = weft::zeros<T>(in, g.device());
        n.grad.view().narrow(dim, start, length) += g;
      });
}
/// The slice of x at `index` along dim, without that dim; dx is dy there and 0 elsewhere.
template <class T>
Var<T> select(const Var<T>& x, std::int64_t dim, std::int64_t index) {
  const Shape in = x.shape();
  return detail::record_view<T>("select", x, x.value().view().select(dim, index), false,
                                [in, dim, index](const auto& node, const Tensor<T>& g) {
                                  if (!node->requires_grad) return;
                                  auto& n = static_cast<detail::Node<T>&>(*node);
                                  if (!n.grad.defined()) n.grad = weft::zeros<T>(in, g.device());
                                  n.grad.view().select(dim, index) += g;
                                });
}

}  // namespace weft::ad

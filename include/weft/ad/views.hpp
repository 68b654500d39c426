// SPDX-License-Identifier: MIT
/// @file The view ops over Vars (reshape, transpose, permute, unsqueeze, squeeze, expand, narrow, slice, select) and their backward: the gradient viewed back (reshape, transpose, permute), summed back (expand) or placed back (narrow, slice, select).
///
/// A Var's value is a contiguous tensor. A view whose elements are contiguous shares them, as
/// a torch view does: a reshape (or unsqueeze, squeeze), a narrow or select along the first
/// dim that is not 1, ... The other views are copied into a contiguous value (a strided Var would
/// make every later op's kernel strided). matmul reads a transposed operand without a copy
/// (ad/matmul.hpp), so the common `x @ w^T` never copies w.
#pragma once

#include <cstdint>
#include <vector>

#include "weft/ad/record.hpp"

namespace weft::ad {
inline namespace WEFT_BACKEND_ABI {

namespace detail {

/// A Tensor over the elements of `view`, a contiguous view, without a copy. The whole storage is
/// adopted as it is; a part of it through a Storage that borrows those bytes and keeps the whole
/// alive (its writes count on its own version counter: a value the tape saved is never written
/// through both).
template <class T>
Tensor<T> share_elements(const TensorView<const T>& view) {
  const std::shared_ptr<Storage>& whole = view.storage();
  const std::size_t bytes = std::size_t(view.numel()) * sizeof(T);
  if (view.offset() == 0 && bytes == whole->bytes()) return Tensor<T>(weft::detail::AdoptStorage{}, whole, view.shape());
  auto part = weft::detail::borrow(const_cast<T*>(view.data()), bytes, whole->device(), [whole](void*) {});
  return Tensor<T>(weft::detail::AdoptStorage{}, std::move(part), view.shape());
}

/// The result of a view op over x: `view` of x's value, sharing x's elements when they are
/// contiguous in it (always for a reshape), else copied; `back(g)` adds the gradient to x.
template <class T, class Back>
Var<T> record_view(const char* op, const Var<T>& x, const TensorView<const T>& view, Back back) {
  Tensor<T> value;
  if (view.is_contiguous() && view.numel() > 0) value = share_elements(view);
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
  return detail::record_view<T>("reshape", x, v, [in](const auto& node, const Tensor<T>& g) {
    detail::accumulate<T>(node, g.view().view(in));
  });
}
/// x with dims d0 and d1 swapped; dx = dy with them swapped back.
template <class T>
Var<T> transpose(const Var<T>& x, std::int64_t d0, std::int64_t d1) {
  return detail::record_view<T>("transpose", x, x.value().view().transpose(d0, d1),
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
  return detail::record_view<T>("permute", x, v, [inverse](const auto& node, const Tensor<T>& g) {
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
  return detail::record_view<T>("expand", x, x.value().view().expand(shape),
                                [in](const auto& node, const Tensor<T>& g) {
                                  detail::accumulate<T>(node, detail::sum_over_broadcast<T>(g.view(), in));
                                });
}
/// `length` elements of x from `start` along dim; dx is dy there and 0 elsewhere.
template <class T>
Var<T> narrow(const Var<T>& x, std::int64_t dim, std::int64_t start, std::int64_t length) {
  const Shape in = x.shape();
  return detail::record_view<T>(
      "narrow", x, x.value().view().narrow(dim, start, length),
      [in, dim, start, length](const auto& node, const Tensor<T>& g) {
        if (!node->requires_grad) return;
        auto& n = static_cast<detail::Node<T>&>(*node);
        if (!n.grad.defined()) n.grad = weft::zeros<T>(in, g.device());
        n.grad.view().narrow(dim, start, length) += g;
      });
}
/// Every step-th element of x along dim in [start, end); dx is dy there and 0 elsewhere.
template <class T>
Var<T> slice(const Var<T>& x, std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step = 1) {
  const Shape in = x.shape();
  return detail::record_view<T>("slice", x, x.value().view().slice(dim, start, end, step),
                                [in, dim, start, end, step](const auto& node, const Tensor<T>& g) {
                                  if (!node->requires_grad) return;
                                  auto& n = static_cast<detail::Node<T>&>(*node);
                                  if (!n.grad.defined()) n.grad = weft::zeros<T>(in, g.device());
                                  n.grad.view().slice(dim, start, end, step) += g;
                                });
}
/// The slice of x at `index` along dim, without that dim; dx is dy there and 0 elsewhere.
template <class T>
Var<T> select(const Var<T>& x, std::int64_t dim, std::int64_t index) {
  const Shape in = x.shape();
  return detail::record_view<T>("select", x, x.value().view().select(dim, index),
                                [in, dim, index](const auto& node, const Tensor<T>& g) {
                                  if (!node->requires_grad) return;
                                  auto& n = static_cast<detail::Node<T>&>(*node);
                                  if (!n.grad.defined()) n.grad = weft::zeros<T>(in, g.device());
                                  n.grad.view().select(dim, index) += g;
                                });
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::ad

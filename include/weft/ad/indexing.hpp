// SPDX-License-Identifier: MIT
/// @file embedding, index_select and gather over Vars; their backward adds the gradient rows back where they were read (embedding_backward, index_add, scatter_add: repeated indices accumulate).
#pragma once

#include "weft/ad/record.hpp"
#include "weft/ops/indexing.hpp"

namespace weft {
namespace ad {
inline namespace WEFT_BACKEND_ABI {
namespace detail {

/// A read of x at `index` along dim (`read(x, dim, index)`), recorded: its backward starts from
/// zeros of x's shape and `add_back(dx, dim, index, dy)` puts dy back where it was read
/// (repeated indices accumulate).
template <class X, class Idx, class Read, class AddBack>
auto indexed_read(const char* op, const X& x, std::int64_t dim, const Idx& index, Read read, AddBack add_back) {
  using T = input_dtype_t<X>;
  const Input<T> in = input<T>(x);
  SavedTensors saved;
  saved.add(index.view());
  const auto ids = index.view();
  return record_op<T>(op, read(in.value, dim, ids), std::array{in.node}, std::move(saved),
                      [node = in.node, ids, dim, shape = in.value.shape(), device = in.value.device(),
                       add_back](const Tensor<T>& g) {
                        if (!node || !node->requires_grad) return;
                        Tensor<T> dx = weft::zeros<T>(shape, device);
                        add_back(dx, dim, ids, g);
                        accumulate<T>(node, std::move(dx));
                      });
}

}  // namespace detail
}  // namespace WEFT_BACKEND_ABI
}  // namespace ad

inline namespace WEFT_BACKEND_ABI {

/// embedding(weight, index) = weight[index] rows; d weight = embedding_backward(dy, index). A
/// weight whose gradient exists (a parameter's, a tied weight's that another use wrote) gets dy's
/// rows added in place (index_add: as many rows as indices), not a dense [rows, dim] gradient.
template <class W, SingleTensor Idx>
  requires ad::detail::AdOperands<W>
auto embedding(const W& weight, const Idx& index) {
  using T = ad::detail::input_dtype_t<W>;
  const ad::detail::Input<T> w = ad::detail::input<T>(weight);
  ad::detail::SavedTensors saved;
  saved.add(index.view());
  const auto ids = index.view();
  const std::int64_t rows = w.value.shape()[0];
  return ad::detail::record_op<T>("embedding", weft::embedding(w.value, ids), std::array{w.node}, std::move(saved),
                                  [node = w.node, ids, rows](const Tensor<T>& g) {
                                    if (!node || !node->requires_grad) return;
                                    Tensor<T>& grad = static_cast<ad::detail::Node<T>&>(*node).grad;
                                    if (grad.defined() && ids.is_contiguous()) {
                                      const std::int64_t dim = grad.shape()[1];
                                      weft::index_add(grad, 0, ids.view({ids.numel()}), g.view({g.numel() / dim, dim}));
                                    } else {
                                      ad::detail::accumulate<T>(node, weft::embedding_backward(g, ids, rows));
                                    }
                                  });
}

/// index_select(x, dim, index): the slices index[i] of x along dim; dx = index_add of dy.
template <class X, SingleTensor Idx>
  requires ad::detail::AdOperands<X>
auto index_select(const X& x, std::int64_t dim, const Idx& index) {
  return ad::detail::indexed_read(
      "index_select", x, dim, index, [](const auto& v, std::int64_t d, const auto& i) { return weft::index_select(v, d, i); },
      [](auto& dx, std::int64_t d, const auto& i, const auto& g) { weft::index_add(dx, d, i, g); });
}

/// gather(x, dim, index): out[i][j] = x[index[i][j]][j] (dim 0); dx = scatter_add of dy.
template <class X, SingleTensor Idx>
  requires ad::detail::AdOperands<X>
auto gather(const X& x, std::int64_t dim, const Idx& index) {
  return ad::detail::indexed_read(
      "gather", x, dim, index, [](const auto& v, std::int64_t d, const auto& i) { return weft::gather(v, d, i); },
      [](auto& dx, std::int64_t d, const auto& i, const auto& g) { weft::scatter_add(dx, d, i, g); });
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft

// SPDX-License-Identifier: MIT
/// @file embedding, index_select and gather over Vars; their backward adds the gradient rows back where they were read (embedding_backward, index_add, scatter_add: repeated indices accumulate).
#pragma once

#include "weft/ad/record.hpp"
#include "weft/ops/indexing.hpp"

namespace weft {

namespace ad::detail {

/// The gradient of a read at `index`: zeros of the input's shape, then `add` puts dy back.
template <class T, class Add>
void add_at_index(const std::shared_ptr<NodeBase>& node, const Shape& shape, Device device, Add add) {
  if (!node || !node->requires_grad) return;
  Tensor<T> dx = weft::zeros<T>(shape, device);
  add(dx);
  accumulate<T>(node, std::move(dx));
}

}  // namespace ad::detail

/// embedding(weight, index) = weight[index] rows; d weight = embedding_backward(dy, index).
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
                                    ad::detail::accumulate<T>(node, weft::embedding_backward(g, ids, rows));
                                  });
}

/// index_select(x, dim, index): the slices index[i] of x along dim; dx = index_add of dy.
template <class X, SingleTensor Idx>
  requires ad::detail::AdOperands<X>
auto index_select(const X& x, std::int64_t dim, const Idx& index) {
  using T = ad::detail::input_dtype_t<X>;
  const ad::detail::Input<T> in = ad::detail::input<T>(x);
  ad::detail::SavedTensors saved;
  saved.add(index.view());
  const auto ids = index.view();
  return ad::detail::record_op<T>(
      "index_select", weft::index_select(in.value, dim, ids), std::array{in.node}, std::move(saved),
      [node = in.node, ids, dim, shape = in.value.shape(), device = in.value.device()](const Tensor<T>& g) {
        ad::detail::add_at_index<T>(node, shape, device, [&](Tensor<T>& dx) { weft::index_add(dx, dim, ids, g); });
      });
}

/// gather(x, dim, index): out[i][j] = x[index[i][j]][j] (dim 0); dx = scatter_add of dy.
template <class X, SingleTensor Idx>
  requires ad::detail::AdOperands<X>
auto gather(const X& x, std::int64_t dim, const Idx& index) {
  using T = ad::detail::input_dtype_t<X>;
  const ad::detail::Input<T> in = ad::detail::input<T>(x);
  ad::detail::SavedTensors saved;
  saved.add(index.view());
  const auto ids = index.view();
  return ad::detail::record_op<T>(
      "gather", weft::gather(in.value, dim, ids), std::array{in.node}, std::move(saved),
      [node = in.node, ids, dim, shape = in.value.shape(), device = in.value.device()](const Tensor<T>& g) {
        ad::detail::add_at_index<T>(node, shape, device, [&](Tensor<T>& dx) { weft::scatter_add(dx, dim, ids, g); });
      });
}

}  // namespace weft

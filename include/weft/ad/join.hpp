// SPDX-License-Identifier: MIT
/// @file cat, stack, split and chunk over Vars: cat's backward hands each input its part of the gradient (a narrow along dim), split's parts are narrows.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "weft/ad/record.hpp"
#include "weft/ad/views.hpp"
#include "weft/ops/join.hpp"

namespace weft {
inline namespace WEFT_BACKEND_ABI {

/// cat(xs, dim): the Vars joined along dim; input k's gradient is dy's part narrow(dim, offset_k, n_k).
template <class T>
ad::Var<T> cat(const std::vector<ad::Var<T>>& xs, std::int64_t dim) {
  std::vector<TensorView<const T>> values;
  std::vector<std::shared_ptr<ad::detail::NodeBase>> nodes;
  for (const ad::Var<T>& x : xs) {
    values.push_back(x.value().view());
    nodes.push_back(x.node());
  }
  Tensor<T> value = weft::cat(values, dim);
  const int d = weft::wrap_dim("cat", dim, value.dim());
  auto node = std::make_shared<ad::detail::Node<T>>();
  node->op = "cat";
  node->value = std::move(value);
  if (ad::detail::recording_for(nodes)) {
    node->requires_grad = true;
    node->parents = nodes;
    ad::detail::Node<T>* self = node.get();
    node->backward_step = [self, nodes, values, d] {
      std::int64_t offset = 0;
      for (std::size_t k = 0; k < nodes.size(); ++k) {
        const std::int64_t n = values[k].shape()[d];
        ad::detail::accumulate<T>(nodes[k], self->grad.view().narrow(d, offset, n));
        offset += n;
      }
    };
  }
  return ad::Var<T>(std::move(node));
}

/// stack(xs, dim): the Vars (one shape) joined along a new dim: cat of each unsqueezed.
template <class T>
ad::Var<T> stack(const std::vector<ad::Var<T>>& xs, std::int64_t dim) {
  if (xs.empty()) weft::detail::fail("stack", "needs at least one Var");
  const int d = weft::wrap_dim("stack", dim, xs[0].value().dim() + 1);
  std::vector<ad::Var<T>> unsqueezed;
  for (const ad::Var<T>& x : xs) unsqueezed.push_back(ad::unsqueeze(x, d));
  return cat(unsqueezed, d);
}

/// split(x, sizes, dim): consecutive parts of x along dim of these sizes, each a narrow.
template <class T>
std::vector<ad::Var<T>> split(const ad::Var<T>& x, const std::vector<std::int64_t>& sizes, std::int64_t dim = 0) {
  const int d = weft::wrap_dim("split", dim, x.value().dim());
  std::int64_t total = 0;
  for (std::int64_t s : sizes) total += s;
  if (total != x.shape()[d])
    weft::detail::fail("split", "the sizes add up to ", total, " but dim ", d, " of shape ", x.shape(), " has ",
                       x.shape()[d], "; give sizes that cover the dim");
  std::vector<ad::Var<T>> parts;
  std::int64_t offset = 0;
  for (std::int64_t s : sizes) {
    parts.push_back(ad::narrow(x, d, offset, s));
    offset += s;
  }
  return parts;
}
/// split(x, split_size, dim): parts of split_size along dim (the last one shorter).
template <class T>
std::vector<ad::Var<T>> split(const ad::Var<T>& x, std::int64_t split_size, std::int64_t dim = 0) {
  const int d = weft::wrap_dim("split", dim, x.value().dim());
  if (split_size <= 0) weft::detail::fail("split", "split_size must be positive, got ", split_size);
  std::vector<std::int64_t> sizes;
  for (std::int64_t at = 0; at < x.shape()[d]; at += split_size) sizes.push_back(std::min(split_size, x.shape()[d] - at));
  return split(x, sizes, d);
}
/// chunk(x, chunks, dim): at most `chunks` parts of ceil(n / chunks) along dim (torch.chunk).
template <class T>
std::vector<ad::Var<T>> chunk(const ad::Var<T>& x, std::int64_t chunks, std::int64_t dim = 0) {
  const int d = weft::wrap_dim("chunk", dim, x.value().dim());
  if (chunks <= 0) weft::detail::fail("chunk", "chunks must be positive, got ", chunks);
  const std::int64_t n = x.shape()[d];
  return split(x, std::max<std::int64_t>(1, (n + chunks - 1) / chunks), d);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft

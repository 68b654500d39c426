// SPDX-License-Identifier: MIT
/// @file ad::grad: the gradients of a Var with respect to chosen Vars, returned, with no grad() touched (torch.autograd.grad).
#pragma once

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/ad/var.hpp"

namespace weft::ad {
inline namespace WEFT_BACKEND_ABI {

/// d y / d inputs[i] for each input (zeros for an input y does not depend on), given dy, the
/// gradient of some scalar with respect to y (of y's shape; omitted for a one-element y: 1).
/// No Var's grad() changes: every gradient the graph would accumulate into is put aside for the
/// run and put back after. The graph is freed, as by backward().
template <class T>
std::vector<Tensor<T>> grad(const Var<T>& y, const std::type_identity_t<std::vector<Var<T>>>& inputs,
                            const std::type_identity_t<Tensor<T>>& dy = {}) {
  const char* op = "ad::grad";
  if (!y.requires_grad())
    detail::fail(op, "y (shape ", y.shape(), ") requires no gradient: nothing it was computed from is an ad::param "
                 "(or it was computed under ad::NoGrad)");
  if (!dy.defined() && y.shape().numel() != 1)
    detail::fail(op, "y has shape ", y.shape(), ": without dy, y must have one element (a loss); pass dy of y's "
                 "shape");
  if (dy.defined() && (dy.shape() != y.shape() || dy.device() != y.value().device()))
    detail::fail(op, "dy has shape ", dy.shape(), " on ", dy.device(), " but y has shape ", y.shape(), " on ",
                 y.value().device(), "; pass the gradient of y's shape and device");
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].defined() || !inputs[i].requires_grad())
      detail::fail(op, "input ", i, " requires no gradient (an empty Var, a constant, or computed under NoGrad); "
                   "pass ad::param leaves or Vars computed from them");
  const std::vector<detail::NodeBase*> order = detail::backward_order(y.node().get());
  // The leaves' gradients are put aside (the non-leaves' are freed after every backward); the
  // leaves are held here, as the backward unlinks the graph.
  std::vector<std::shared_ptr<detail::NodeBase>> leaves;
  for (detail::NodeBase* node : order)
    if (node->is_leaf()) leaves.push_back(node->shared_from_this());
  for (const auto& leaf : leaves) leaf->swap_aside();
  for (const Var<T>& input : inputs) input.node()->keep_grad = true;
  y.node()->grad = dy.defined() ? Tensor<T>(dy) : weft::ones<T>(y.shape(), y.value().device());
  std::vector<Tensor<T>> out;
  try {
    detail::run_backward(order);
    for (const Var<T>& input : inputs) {
      Tensor<T>& g = input.node()->grad;
      out.push_back(g.defined() ? std::move(g) : weft::zeros<T>(input.shape(), input.value().device()));
    }
  } catch (...) {
    for (const auto& leaf : leaves) leaf->swap_aside();
    throw;
  }
  for (const Var<T>& input : inputs) {
    input.node()->keep_grad = false;
    input.node()->grad = Tensor<T>();
  }
  for (const auto& leaf : leaves) leaf->swap_aside();
  return out;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::ad

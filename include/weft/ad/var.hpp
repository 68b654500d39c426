// SPDX-License-Identifier: MIT
/// @file weft::ad::Var: a tensor the tape tracks (its value, its gradient, the node that made it), ad::param, backward.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "weft/ad/node.hpp"

namespace weft::ad {
inline namespace WEFT_BACKEND_ABI {

/// A tensor the tape tracks. `ad::param(t)` makes a leaf that requires a gradient; an op on Vars
/// returns a Var whose node remembers how to push a gradient back (ad/expression.hpp, ...).
/// Copying a Var copies the handle (both name one node), as torch tensors do. Like the
/// optimizers and modules, autograd lives in the backend's inline namespace (core/config.hpp:
/// its ops run kernels), so a Var made in a .cu file is another type than one made in a .cpp file.
template <class T>
class Var {
 public:
  using value_type = T;

  Var() = default;
  /// A Var from an autograd expression (`ad::Var<float> y = a * sigmoid(b) + c;`): evaluated now, in
  /// one kernel, and recorded as one node whose backward is one kernel too.
  template <class X>
    requires requires(const X& x) { x.template record<T>(); }
  Var(const X& x) : node_(x.template record<T>()) {}  // NOLINT: implicit, as `Tensor<T> y = expr`
  /// A Var that requires no gradient (a constant of the graph, as a plain tensor would be).
  explicit Var(Tensor<T> value) : node_(std::make_shared<detail::Node<T>>()) {
    node_->value = std::move(value);
    node_->leaf = true;
  }

  bool defined() const { return node_ != nullptr; }
  const Tensor<T>& value() const { return checked().value; }
  /// A writable view of the value (torch's `.data`), for optimizers and loading weights: writes
  /// through it are not recorded, and a value the tape saved that is written before its backward
  /// makes that backward throw (Storage::version).
  TensorView<T> data() const { return checked().value.view(); }
  const Shape& shape() const { return value().shape(); }
  bool requires_grad() const { return checked().requires_grad; }
  /// The accumulated gradient (of the value's shape): zeros until a backward writes it.
  Tensor<T>& grad() const { return checked().grad_for_accumulation(); }
  void zero_grad() const {
    detail::Node<T>& n = checked();
    if (n.grad.defined()) n.grad = T(0);
  }

  /// Backpropagates from this one-element Var (a loss): d(this)/d(leaf) is ADDED to every leaf's
  /// grad() that this Var depends on and that requires a gradient; the graph is freed.
  void backward() {
    const char* op = "ad::backward";
    if (!requires_grad())
      detail::fail(op, "this Var (shape ", shape(), ") requires no gradient: nothing it was computed from is an "
                   "ad::param (or it was computed under ad::NoGrad)");
    if (shape().numel() != 1)
      detail::fail(op, "backward() without a gradient needs a one-element Var (a loss), got shape ", shape(),
                   "; reduce it first (weft::sum or weft::mean of it) or pass the gradient: y.backward(dy)");
    backward(weft::ones<T>(shape(), value().device()));
  }
  /// Backpropagates `dy` (the gradient of some scalar with respect to this Var, of its shape).
  void backward(const Tensor<T>& dy) {
    const char* op = "ad::backward";
    if (!requires_grad())
      detail::fail(op, "this Var (shape ", shape(), ") requires no gradient: nothing it was computed from is an "
                   "ad::param (or it was computed under ad::NoGrad)");
    if (!dy.defined() || dy.shape() != shape() || dy.device() != value().device())
      detail::fail(op, "the gradient must have the Var's shape ", shape(), " and device ", value().device(), ", got ",
                   dy.defined() ? cat_shape(dy) : std::string("an empty tensor"));
    const std::vector<detail::NodeBase*> order = detail::backward_order(node_.get());
    if (node_->grad.defined()) node_->grad += dy;
    else if (node_->is_leaf() || !dy.is_contiguous()) node_->grad = dy;
    else node_->grad = Tensor<T>(weft::detail::AdoptStorage{}, dy.storage(), dy.shape());  // read only: no copy
    detail::run_backward(order);
  }

  /// The node (for the ops that record on the tape).
  const std::shared_ptr<detail::Node<T>>& node() const { return node_; }
  explicit Var(std::shared_ptr<detail::Node<T>> node) : node_(std::move(node)) {}

 private:
  detail::Node<T>& checked() const {
    if (!node_) detail::fail("ad::Var", "the Var is empty (default-constructed); assign an expression or ad::param(t)");
    return *node_;
  }
  static std::string cat_shape(const Tensor<T>& t) { return weft::detail::cat("shape ", t.shape(), " on ", t.device()); }

  std::shared_ptr<detail::Node<T>> node_;
};

/// A leaf of the tape that requires a gradient (torch's `requires_grad=True` tensor): it owns
/// `value`, and every backward adds to its grad().
template <class T>
Var<T> param(Tensor<T> value) {
  if (!value.defined()) detail::fail("ad::param", "the value is an empty (default-constructed) tensor");
  auto node = std::make_shared<detail::Node<T>>();
  node->value = std::move(value);
  node->leaf = true;
  node->requires_grad = true;
  node->op = "param";
  return Var<T>(std::move(node));
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::ad

// SPDX-License-Identifier: MIT
/// @file TensorList<T> (an ordered list of views of tensors, one dtype and device) and ScalarList<T> (one number per tensor).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <vector>

#include "weft/core/list_members.hpp"
#include "weft/core/tensor.hpp"

namespace weft {

/// A list of views of tensors of dtype T, any shapes: built from tensors, it refers to their
/// elements. Like a view, it is a handle: copies of a list share it, and assigning an expression
/// writes every listed tensor's elements, in ONE foreach kernel.
template <Element T>
class TensorList {
 public:
  using value_type = T;

  TensorList() : state_(std::make_shared<State>()) {}
  TensorList(std::vector<TensorView<T>> views) : TensorList() {
    state_->tensors.reserve(views.size());
    for (TensorView<T>& v : views) push_back(std::move(v));
  }
  /// Views of these tensors' elements (an rvalue vector's elements stay alive in the views, and
  /// the list owns them).
  TensorList(std::vector<Tensor<T>>& tensors) : TensorList(std::vector<TensorView<T>>(tensors.begin(), tensors.end())) {}
  TensorList(std::vector<Tensor<T>>&& tensors) : TensorList(tensors) { state_->owned.assign(size(), true); }
  TensorList(std::initializer_list<TensorView<T>> views) : TensorList(std::vector<TensorView<T>>(views)) {}
  TensorList(const TensorList&) = default;
  TensorList(TensorList&&) noexcept = default;

  /// Writes other's values into this list's tensors (same length and shapes).
  WEFT_ABI_INLINE TensorList& operator=(const TensorList& other) {
    detail::assign_into<detail::AssignKind::set>(*this, other);
    return *this;
  }
  template <class Source>
  WEFT_ABI_INLINE TensorList& operator=(const Source& source) {
    detail::assign_into<detail::AssignKind::set>(*this, source);
    return *this;
  }
  template <class Source>
  WEFT_ABI_INLINE TensorList& operator+=(const Source& source) {
    detail::assign_into<detail::AssignKind::add>(*this, source);
    return *this;
  }
  template <class Source>
  WEFT_ABI_INLINE TensorList& operator-=(const Source& source) {
    detail::assign_into<detail::AssignKind::sub>(*this, source);
    return *this;
  }
  template <class Source>
  WEFT_ABI_INLINE TensorList& operator*=(const Source& source) {
    detail::assign_into<detail::AssignKind::mul>(*this, source);
    return *this;
  }
  template <class Source>
  WEFT_ABI_INLINE TensorList& operator/=(const Source& source) {
    detail::assign_into<detail::AssignKind::div>(*this, source);
    return *this;
  }

  std::size_t size() const { return state_->tensors.size(); }
  bool empty() const { return state_->tensors.empty(); }
  /// A view of tensor i (assigning to it writes that tensor's elements).
  TensorView<T>& operator[](std::size_t i) const { return state_->tensors[i]; }
  void push_back(TensorView<T> view) {
    state_->members.append(view.data(), view.defined() ? view.numel() : 0);
    state_->tensors.push_back(std::move(view));
    state_->owned.push_back(false);
  }
  /// Takes a tensor the caller gives up (an rvalue): the list owns its elements.
  void push_back(Tensor<T>&& tensor) {
    push_back(TensorView<T>(tensor));
    state_->owned.back() = true;
  }
  /// Whether member i was built from a tensor the list took (an rvalue): then the list may hold
  /// the only reference to its elements. A member viewing a caller's tensor that holds the only
  /// reference shows elements the caller dropped (the tensor was reassigned or destroyed): the
  /// optimizers check this (optim/optimizer.hpp).
  bool owns(std::size_t i) const { return state_->owned[i]; }
  auto begin() const { return state_->tensors.begin(); }
  auto end() const { return state_->tensors.end(); }
  /// Identity of the shared list (two handles to one list compare equal).
  const void* id() const { return state_.get(); }

  /// Total number of elements over all tensors.
  std::int64_t numel() const { return state_->members.start.back(); }

  /// The members as flat arrays (element pointers and offsets), kept in step with the views:
  /// what foreach kernels read (core/list_members.hpp).
  const detail::ListMembers& member_table() const { return state_->members; }

 private:
  struct State {
    std::vector<TensorView<T>> tensors;
    detail::ListMembers members;
    std::vector<bool> owned;  // owned[i]: see owns(i)
  };
  std::shared_ptr<State> state_;
};

/// One number per tensor of a list (per-tensor learning rates, bias
/// corrections). In type promotion it counts as a number, like a Python
/// scalar passed to torch._foreach_*.
template <class T>
  requires std::is_arithmetic_v<T>
class ScalarList {
 public:
  using value_type = T;
  ScalarList() : values_(std::make_shared<std::vector<T>>()) {}
  ScalarList(std::vector<T> values) : values_(std::make_shared<std::vector<T>>(std::move(values))) {}
  ScalarList(std::initializer_list<T> values) : ScalarList(std::vector<T>(values)) {}

  std::size_t size() const { return values_->size(); }
  T& operator[](std::size_t i) const { return (*values_)[i]; }
  void push_back(T v) { values_->push_back(v); }
  const void* id() const { return values_.get(); }

 private:
  std::shared_ptr<std::vector<T>> values_;
};

template <class X>
inline constexpr bool is_tensor_list_v = detail::is_instance_v<X, TensorList>;

template <class X>
inline constexpr bool is_scalar_list_v = detail::is_instance_v<X, ScalarList>;

}  // namespace weft

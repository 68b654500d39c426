// SPDX-License-Identifier: MIT
/// @file Tensor<T>: a contiguous array that owns its elements, a regular value type (copying copies, moving is O(1)).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/core/tensor_view.hpp"
#include "weft/core/tuple.hpp"

namespace weft {

template <class X>
inline constexpr bool is_tensor_v = detail::is_instance_v<X, Tensor>;

template <class X>
inline constexpr bool is_tensor_view_v = detail::is_instance_v<X, TensorView>;

template <class X>
inline constexpr bool is_tensor_base_v = detail::is_instance_v<X, TensorBase>;

/// A Tensor, a TensorView (any constness), or their common base: what an expression reads as a
/// leaf (through a read-only view, `x.view()`).
template <class X>
inline constexpr bool is_single_tensor_v = is_tensor_v<X> || is_tensor_view_v<X> || is_tensor_base_v<X>;

namespace detail {
/// Tag of Tensor's constructor that adopts a new contiguous allocation.
struct AdoptStorage {};
}  // namespace detail

/// Owns its elements, like Eigen::Matrix or std::vector: copying copies the elements, moving is
/// O(1), and after `y = rhs` y equals rhs (same shape, same values), whatever y held before: y
/// is written in place when the shape already fits, else reallocated (views of the old elements
/// keep them). `Tensor<float> y = a + b;` evaluates the expression. A Tensor is always
/// contiguous; views (slice, transpose, ...) are TensorViews of its elements, read-only when
/// the tensor is const.
template <Element T>
class Tensor : public TensorBase<T>, public InPlaceMethods<Tensor<T>> {
  using Base = TensorBase<T>;

 public:
  using value_type = T;

  /// No elements and no shape: defined() is false; assigning gives it both.
  Tensor() = default;
  /// A copy of other's elements (one kernel).
  WEFT_ABI_INLINE Tensor(const Tensor& other) : Tensor(other.clone()) {}
  Tensor(Tensor&& other) noexcept : Base(std::move(other)) { other.reset(); }
  ~Tensor() = default;
  /// Evaluates an expression into a new tensor (one kernel): `Tensor<float> y = a + b;`. The
  /// expression's dtype must convert to T without losing its kind (torch.can_cast).
  template <class Source>
    requires is_expression_v<Source>
  WEFT_ABI_INLINE Tensor(const Source& source) {  // NOLINT: implicit, as Eigen's Matrix from an expression
    detail::assign_into<detail::AssignKind::set>(*this, source);
  }
  /// Copies a view (or a tensor of another dtype) into a new contiguous tensor. Explicit, so that
  /// no view becomes a copy unasked: passing a view where a `const Tensor&` is expected, or
  /// returning one as a Tensor, does not compile (write `Tensor<T>(view)` or `view.clone()`).
  template <class Source>
    requires is_single_tensor_v<Source> && (!std::is_same_v<Source, Tensor>)
  WEFT_ABI_INLINE explicit Tensor(const Source& source) {
    detail::assign_into<detail::AssignKind::set>(*this, source);
  }
  /// Adopts a new contiguous allocation of `shape` (factories build tensors this way).
  Tensor(detail::AdoptStorage, std::shared_ptr<Storage> storage, const Shape& shape)
      : Base(std::move(storage), shape, contiguous_strides(shape), 0) {}

  /// y = other: written in place when the shapes match, else reallocated.
  WEFT_ABI_INLINE Tensor& operator=(const Tensor& other) { return write<detail::AssignKind::set>(other); }
  /// Takes other's elements (O(1)); views of this tensor's old elements keep them.
  Tensor& operator=(Tensor&& other) noexcept {
    if (this != &other) {
      Base::operator=(std::move(other));
      other.reset();
    }
    return *this;
  }
  /// y = rhs (an expression, a view, a number): written in place when the shapes match, else
  /// reallocated with the right-hand side's shape. A number fills the tensor as it is.
  template <class Source>
    requires(!std::is_same_v<Source, Tensor>)
  WEFT_ABI_INLINE Tensor& operator=(const Source& source) { return write<detail::AssignKind::set>(source); }
  /// Compound assignments write in place; the right-hand side broadcasts to this tensor's shape.
  template <class Source>
  WEFT_ABI_INLINE Tensor& operator+=(const Source& source) { return write<detail::AssignKind::add>(source); }
  template <class Source>
  WEFT_ABI_INLINE Tensor& operator-=(const Source& source) { return write<detail::AssignKind::sub>(source); }
  template <class Source>
  WEFT_ABI_INLINE Tensor& operator*=(const Source& source) { return write<detail::AssignKind::mul>(source); }
  template <class Source>
  WEFT_ABI_INLINE Tensor& operator/=(const Source& source) { return write<detail::AssignKind::div>(source); }

  /// Address of element 0; on a CUDA tensor, a device address.
  T* data() { return this->element_address(); }
  const T* data() const { return this->element_address(); }

  /// Element (i, j, ...), writable (TensorBase::operator() says what it checks); a const tensor's
  /// is read-only.
  using Base::operator();
  template <class... Index>
    requires(detail::ElementIndex<Index> && ...)
  T& operator()(Index... index) {
    return *this->element_pointer({std::int64_t(index)...});
  }

  // ---- views of this tensor's elements (read-only when the tensor is const) ------------------
  TensorView<T> view() { return TensorView<T>(this->storage_, this->shape_, this->strides_, 0); }
  TensorView<const T> view() const { return TensorView<const T>(this->storage_, this->shape_, this->strides_, 0); }
  TensorView<T> slice(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step = 1) {
    return view().slice(dim, start, end, step);
  }
  TensorView<const T> slice(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step = 1) const {
    return view().slice(dim, start, end, step);
  }
  TensorView<T> narrow(std::int64_t dim, std::int64_t start, std::int64_t length) { return view().narrow(dim, start, length); }
  TensorView<const T> narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const {
    return view().narrow(dim, start, length);
  }
  TensorView<T> select(std::int64_t dim, std::int64_t index) { return view().select(dim, index); }
  TensorView<const T> select(std::int64_t dim, std::int64_t index) const { return view().select(dim, index); }
  /// select(0, index): t[i][j] is a 0-dim view of element (i, j).
  TensorView<T> operator[](std::int64_t index) { return view().select(0, index); }
  TensorView<const T> operator[](std::int64_t index) const { return view().select(0, index); }
  /// torch's t(): a 2-D tensor transposed; 0-D and 1-D as they are.
  TensorView<T> t() { return view().t(); }
  TensorView<const T> t() const { return view().t(); }
  TensorView<T> transpose(std::int64_t dim0, std::int64_t dim1) { return view().transpose(dim0, dim1); }
  TensorView<const T> transpose(std::int64_t dim0, std::int64_t dim1) const { return view().transpose(dim0, dim1); }
  TensorView<T> permute(const std::vector<std::int64_t>& dims) { return view().permute(dims); }
  TensorView<const T> permute(const std::vector<std::int64_t>& dims) const { return view().permute(dims); }
  TensorView<T> permute(std::initializer_list<std::int64_t> dims) { return view().permute(dims); }
  TensorView<const T> permute(std::initializer_list<std::int64_t> dims) const { return view().permute(dims); }
  TensorView<T> unsqueeze(std::int64_t dim) { return view().unsqueeze(dim); }
  TensorView<const T> unsqueeze(std::int64_t dim) const { return view().unsqueeze(dim); }
  TensorView<T> squeeze(std::int64_t dim) { return view().squeeze(dim); }
  TensorView<const T> squeeze(std::int64_t dim) const { return view().squeeze(dim); }
  TensorView<T> expand(const Shape& to) { return view().expand(to); }
  TensorView<const T> expand(const Shape& to) const { return view().expand(to); }
  /// Same elements, new shape (a Tensor is contiguous, so reshape never copies).
  TensorView<T> view(const Shape& to) { return view().view(to); }
  TensorView<const T> view(const Shape& to) const { return view().view(to); }
  TensorView<T> reshape(const Shape& to) { return view().view(to); }
  TensorView<const T> reshape(const Shape& to) const { return view().view(to); }
  /// A Tensor is contiguous: a view of its own elements.
  TensorView<T> contiguous() { return view(); }
  TensorView<const T> contiguous() const { return view(); }

 private:
  void reset() {
    this->storage_.reset();
    this->shape_ = Shape{};
    this->strides_ = Strides{};
    this->offset_ = 0;
  }

  template <detail::AssignKind kind, class Source>
  WEFT_ABI_INLINE Tensor& write(const Source& source) {
    detail::assign_into<kind>(*this, source);
    return *this;
  }
};

template <Element T>
inline Tensor<T> TensorBase<T>::clone() const {
  if (!defined()) return Tensor<T>();
  detail::count_copy(numel());
  Tensor<T> out(detail::AdoptStorage{}, detail::allocate(std::size_t(numel()) * sizeof(T), device()), shape_);
  TensorView<T> dst = out;
  detail::assign_into<detail::AssignKind::set>(dst, view());
  return out;
}

template <Element T>
inline Tensor<T> TensorBase<T>::to(Device target) const {
  if (!defined() || target == device()) return clone();
  const Tensor<T> source = is_contiguous() ? Tensor<T>() : clone();
  const T* from = source.defined() ? source.data() : element_address();
  detail::count_copy(numel());
  Tensor<T> out(detail::AdoptStorage{}, detail::allocate(std::size_t(numel()) * sizeof(T), target), shape_);
  detail::copy_bytes(out.data(), target, from, device(), std::size_t(numel()) * sizeof(T));
  return out;
}

template <Element T>
inline std::vector<T> TensorBase<T>::to_vector() const {
  if (device().is_cpu() && is_contiguous()) return std::vector<T>(element_address(), element_address() + numel());
  const Tensor<T> host = to(Device::cpu());
  return std::vector<T>(host.data(), host.data() + numel());
}

template <Element T>
inline T TensorBase<T>::item() const {
  if (numel() != 1) detail::fail("item", "needs exactly one element, tensor has shape ", shape_);
  if (device().is_cpu()) return *element_address();
  T value;
  detail::copy_bytes(&value, Device::cpu(), element_address(), device(), sizeof(T));
  return value;
}

}  // namespace weft

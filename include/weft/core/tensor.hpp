// SPDX-License-Identifier: MIT
/// @file Tensor<T>: a shared-storage handle with shape, strides, offset and device, and its views.
#pragma once

#include <algorithm>
#include <memory>
#include <numeric>
#include <vector>

#include "weft/core/device.hpp"
#include "weft/core/dtype.hpp"
#include "weft/core/error.hpp"
#include "weft/core/shape.hpp"
#include "weft/core/storage.hpp"

namespace weft {

template <Element T>
class Tensor;

namespace detail {
/// How an assignment combines the destination with the new value.
enum class AssignKind : unsigned char { set, add, sub, mul, div };

inline namespace WEFT_BACKEND_ABI {
// Defined by expr/fuse.hpp: evaluates `source` (a tensor, scalar or
// expression) into `dst`, allocating dst when it is empty.
template <AssignKind kind, class T, class Source>
void assign_into(Tensor<T>& dst, const Source& source);
}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

/// A cheap handle: copying shares storage (like PyTorch); assignment writes
/// values into the existing storage (like Eigen). See DESIGN.md, Tensors.
template <Element T>
class Tensor {
 public:
  using value_type = T;

  Tensor() = default;
  Tensor(const Tensor&) = default;
  Tensor(Tensor&&) noexcept = default;
  ~Tensor() = default;

  /// A view of `storage` (internal: factories and views build tensors this way).
  Tensor(std::shared_ptr<Storage> storage, Shape shape, Strides strides, std::int64_t offset)
      : storage_(std::move(storage)), shape_(shape), strides_(strides), offset_(offset) {}

  /// Writes other's values into this tensor (broadcasting); allocates when empty.
  WEFT_ABI_INLINE Tensor& operator=(const Tensor& other) {
    detail::assign_into<detail::AssignKind::set>(*this, other);
    return *this;
  }
  /// An empty tensor adopts a temporary's storage; otherwise values are written.
  WEFT_ABI_INLINE Tensor& operator=(Tensor&& other) {
    if (!defined() && other.defined()) {
      storage_ = std::move(other.storage_);
      shape_ = other.shape_;
      strides_ = other.strides_;
      offset_ = other.offset_;
    } else {
      detail::assign_into<detail::AssignKind::set>(*this, other);
    }
    return *this;
  }
  template <class Source>
  WEFT_ABI_INLINE Tensor& operator=(const Source& source) {
    detail::assign_into<detail::AssignKind::set>(*this, source);
    return *this;
  }
  template <class Source>
  WEFT_ABI_INLINE Tensor& operator+=(const Source& source) {
    detail::assign_into<detail::AssignKind::add>(*this, source);
    return *this;
  }
  template <class Source>
  WEFT_ABI_INLINE Tensor& operator-=(const Source& source) {
    detail::assign_into<detail::AssignKind::sub>(*this, source);
    return *this;
  }
  template <class Source>
  WEFT_ABI_INLINE Tensor& operator*=(const Source& source) {
    detail::assign_into<detail::AssignKind::mul>(*this, source);
    return *this;
  }
  template <class Source>
  WEFT_ABI_INLINE Tensor& operator/=(const Source& source) {
    detail::assign_into<detail::AssignKind::div>(*this, source);
    return *this;
  }

  // ---- queries ---------------------------------------------------------
  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  int dim() const { return shape_.rank(); }
  std::int64_t numel() const { return shape_.numel(); }
  std::int64_t size(std::int64_t d) const { return shape_[wrap_dim("size", d, dim())]; }
  const Strides& strides() const { return strides_; }
  std::int64_t offset() const { return offset_; }
  Device device() const { return storage_ ? storage_->device() : Device::cpu(); }
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  /// Address of element (0, ..., 0); on a CUDA tensor, a device address.
  T* data() const { return storage_ ? static_cast<T*>(storage_->data()) + offset_ : nullptr; }

  bool is_contiguous() const { return weft::is_contiguous(shape_, strides_); }

  // ---- views (share storage) ---------------------------------------------
  /// Elements start, start+step, ... below end along dim (Python slice semantics, step > 0).
  Tensor slice(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step = 1) const {
    int d = wrap_dim("slice", dim, this->dim());
    if (step <= 0) detail::fail("slice", "step must be positive, got ", step);
    std::int64_t n = shape_[d];
    auto clamp = [n](std::int64_t i) { return std::clamp<std::int64_t>(i < 0 ? i + n : i, 0, n); };
    start = clamp(start);
    end = std::max(clamp(end), start);
    Tensor out = *this;
    out.offset_ += start * strides_[d];
    out.shape_[d] = (end - start + step - 1) / step;
    out.strides_[d] *= step;
    return out;
  }
  /// `length` elements from `start` along dim; the range must lie inside the tensor.
  Tensor narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const {
    int d = wrap_dim("narrow", dim, this->dim());
    if (start < 0) start += shape_[d];
    if (start < 0 || length < 0 || start + length > shape_[d])
      detail::fail("narrow", "range [", start, ", ", start + length, ") does not fit dim ", d, " of shape ",
                   shape_);
    return slice(d, start, start + length);
  }
  /// The slice at `index` along dim, with that dim removed.
  Tensor select(std::int64_t dim, std::int64_t index) const {
    int d = wrap_dim("select", dim, this->dim());
    if (index < -shape_[d] || index >= shape_[d])
      detail::fail("select", "index ", index, " is out of range for dim ", d, " of shape ", shape_);
    if (index < 0) index += shape_[d];
    Tensor out = *this;
    out.offset_ += index * strides_[d];
    out.shape_.erase(d);
    out.strides_.erase(d);
    return out;
  }
  Tensor transpose(std::int64_t dim0, std::int64_t dim1) const {
    int a = wrap_dim("transpose", dim0, dim()), b = wrap_dim("transpose", dim1, dim());
    Tensor out = *this;
    std::swap(out.shape_[a], out.shape_[b]);
    std::swap(out.strides_[a], out.strides_[b]);
    return out;
  }
  /// out.shape[i] = shape[dims[i]]; dims must be a permutation of 0..dim()-1.
  Tensor permute(std::initializer_list<std::int64_t> dims) const { return permute(std::vector<std::int64_t>(dims)); }
  Tensor permute(const std::vector<std::int64_t>& dims) const {
    if (int(dims.size()) != dim()) detail::fail("permute", "got ", dims.size(), " dims for a tensor of shape ", shape_);
    std::vector<bool> seen(dim(), false);
    Tensor out = *this;
    for (int i = 0; i < dim(); ++i) {
      int d = wrap_dim("permute", dims[i], dim());
      if (seen[d]) detail::fail("permute", "dim ", d, " repeats; dims must be a permutation");
      seen[d] = true;
      out.shape_[i] = shape_[d];
      out.strides_[i] = strides_[d];
    }
    return out;
  }
  Tensor unsqueeze(std::int64_t dim) const {
    int d = wrap_dim("unsqueeze", dim, this->dim() + 1);
    Tensor out = *this;
    out.shape_.insert(d, 1);
    out.strides_.insert(d, d < this->dim() ? strides_[d] * shape_[d] : 1);
    return out;
  }
  Tensor squeeze(std::int64_t dim) const {
    int d = wrap_dim("squeeze", dim, this->dim());
    if (shape_[d] != 1) return *this;
    Tensor out = *this;
    out.shape_.erase(d);
    out.strides_.erase(d);
    return out;
  }
  /// Broadcast view: size-1 dims (and new leading dims) repeat with stride 0; -1 keeps a dim.
  Tensor expand(Shape to) const {
    int lead = to.rank() - dim();
    bool valid = lead >= 0;  // checked first: a lower rank would index shape_ at negative dims
    for (int d = std::max(lead, 0); valid && d < to.rank(); ++d)
      if (to[d] == -1) to[d] = shape_[d - lead];
    for (std::int64_t e : to) valid = valid && e >= 0;  // -1 only keeps an existing dim
    if (!valid || !broadcasts_to(shape_, to))
      detail::fail("expand", "cannot expand shape ", shape_, " to ", to,
                   "; only size-1 dims (and new leading dims) can grow");
    return Tensor(storage_, to, broadcast_strides(shape_, strides_, to), offset_);
  }
  /// Same elements, new shape, shared storage; needs a contiguous tensor (use reshape otherwise).
  Tensor view(Shape to) const {
    to = infer_reshape("view", to);
    if (!is_contiguous())
      detail::fail("view", "tensor of shape ", shape_, " and strides ", strides_,
                   " is not contiguous; call reshape() (which copies) or contiguous() first");
    return Tensor(storage_, to, contiguous_strides(to), offset_);
  }
  /// A view when the tensor is contiguous, else a contiguous copy with the new shape.
  WEFT_ABI_INLINE Tensor reshape(Shape to) const { return is_contiguous() ? view(to) : contiguous().view(to); }

  // ---- copies ---------------------------------------------------------------
  /// A fresh contiguous copy on the same device.
  WEFT_ABI_INLINE Tensor clone() const {
    Tensor out;
    out = *this;
    return out;
  }
  WEFT_ABI_INLINE Tensor contiguous() const { return is_contiguous() ? *this : clone(); }
  /// A contiguous copy on `device` (this tensor itself when already there... and contiguous).
  WEFT_ABI_INLINE Tensor to(Device target) const {
    if (target == device() && is_contiguous()) return *this;
    Tensor src = contiguous();
    auto storage = detail::allocate(std::size_t(numel()) * sizeof(T), target);
    detail::copy_bytes(storage->data(), target, src.data(), src.device(), std::size_t(numel()) * sizeof(T));
    return Tensor(std::move(storage), shape_, contiguous_strides(shape_), 0);
  }
  /// The elements in row-major order, copied to the host.
  WEFT_ABI_INLINE std::vector<T> to_vector() const {
    Tensor host = to(Device::cpu());
    return std::vector<T>(host.data(), host.data() + numel());
  }
  /// The single element of a one-element tensor.
  WEFT_ABI_INLINE T item() const {
    if (numel() != 1) detail::fail("item", "needs exactly one element, tensor has shape ", shape_);
    return to(Device::cpu()).data()[0];
  }

 private:
  Shape infer_reshape(const char* op, Shape to) const {
    int infer = -1;
    std::int64_t known = 1;
    for (int d = 0; d < to.rank(); ++d) {
      if (to[d] == -1) {
        if (infer >= 0) detail::fail(op, "only one dimension can be -1 in ", to);
        infer = d;
      } else if (to[d] < 0) {
        detail::fail(op, "invalid extent ", to[d], " in ", to);
      } else {
        known *= to[d];
      }
    }
    if (infer >= 0 && known != 0 && numel() % known == 0) to[infer] = numel() / known;
    // A -1 beside a 0 extent could be anything (PyTorch refuses it too).
    if (to.numel() != numel() || (infer >= 0 && known == 0))
      detail::fail(op, "shape ", to, " is invalid for a tensor of shape ", shape_);
    return to;
  }

  std::shared_ptr<Storage> storage_;
  Shape shape_;
  Strides strides_;
  std::int64_t offset_ = 0;
};

template <class X>
inline constexpr bool is_tensor_v = false;
template <class T>
inline constexpr bool is_tensor_v<Tensor<T>> = true;

}  // namespace weft

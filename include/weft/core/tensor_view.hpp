// SPDX-License-Identifier: MIT
/// @file TensorView<T>: a handle to elements a tensor owns (shape, strides, offset, shared storage), and the view operations.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <type_traits>
#include <vector>

#include "weft/core/device.hpp"
#include "weft/core/dtype.hpp"
#include "weft/core/error.hpp"
#include "weft/core/shape.hpp"
#include "weft/core/storage.hpp"
#include "weft/core/tensor_methods.hpp"

namespace weft {

template <Element T>
class Tensor;

/// Base of every expression node (expr/expr.hpp).
template <class Derived>
struct Expr;

/// Whether X is an expression node.
template <class X>
inline constexpr bool is_expression_v = std::is_class_v<X> && std::is_base_of_v<Expr<X>, X>;

/// A handle to elements that tensors own; `E` is `T` (writable) or `const T` (read-only).
template <class E>
  requires Element<std::remove_const_t<E>>
class TensorView;

template <Element T>
class TensorList;

namespace detail {
/// How an assignment combines the destination with the new value.
enum class AssignKind : unsigned char { set, add, sub, mul, div };

inline namespace WEFT_BACKEND_ABI {
// Defined by ops/fuse.hpp: evaluates `source` (a tensor, view, number or expression) into the
// destination. A view keeps its shape (the source broadcasts to it); a Tensor takes the source's
// shape (set) or keeps its own (compound assignments); a list gets `source` at k in tensor k.
template <AssignKind kind, class T, class Source>
void assign_into(TensorView<T>& dst, const Source& source);
template <AssignKind kind, class T, class Source>
void assign_into(Tensor<T>& dst, const Source& source);
template <AssignKind kind, class T, class Source>
void assign_into(TensorList<T>& dst, const Source& source);
}  // namespace WEFT_BACKEND_ABI

/// An index of element access, t(i, j): an integer (not a bool).
template <class I>
concept ElementIndex = std::is_integral_v<I> && !std::is_same_v<I, bool>;

}  // namespace detail

/// The queries and view arithmetic that Tensor<T> and TensorView<E> share: storage, shape,
/// strides and offset. View operations compute a new (shape, strides, offset) here; the
/// classes wrap it in the handle type they return. A `const TensorBase<T>&` parameter takes a
/// Tensor<T> or any TensorView of T, read-only, with T deduced (what weft's own helpers use).
/// The methods that mirror free functions (`x.sum(1)`, `x.exp()`, `x.matmul(w)`) come from
/// TensorMethods (core/tensor_methods.hpp).
template <Element T>
class TensorBase : public TensorMethods<TensorBase<T>> {
 public:
  using value_type = T;

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  int dim() const { return shape_.rank(); }
  std::int64_t numel() const { return shape_.numel(); }
  std::int64_t size(std::int64_t d) const { return shape_[wrap_dim("size", d, dim())]; }
  const Strides& strides() const { return strides_; }
  std::int64_t offset() const { return offset_; }
  Device device() const { return storage_ ? storage_->device() : Device::cpu(); }
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  bool is_contiguous() const { return weft::is_contiguous(shape_, strides_); }
  /// Address of element (0, ..., 0), read-only (Tensor and TensorView<T> also give writable
  /// ones); on a CUDA tensor, a device address.
  const T* data() const { return element_address(); }
  /// A read-only view of these elements (Tensor and TensorView<T> give writable ones when they
  /// can).
  TensorView<const T> view() const { return TensorView<const T>(storage_, shape_, strides_, offset_); }

  /// A new contiguous Tensor with these elements, on the same device.
  WEFT_ABI_INLINE Tensor<T> clone() const;
  /// A contiguous copy on `target` (always a new Tensor, also on the same device).
  WEFT_ABI_INLINE Tensor<T> to(Device target) const;
  /// The elements in row-major order, copied to the host.
  WEFT_ABI_INLINE std::vector<T> to_vector() const;
  /// The single element of a one-element tensor.
  WEFT_ABI_INLINE T item() const;

  /// Element (i, j, ...) of a CPU tensor, read-only (Tensor and TensorView<T> give writable
  /// references): one index per dim, each in [-n, n) for a dim of extent n, negative ones counted
  /// from the end as in torch (`t(-1, 0)`: the last row's first element). A wrong index count, an
  /// index out of range or a CUDA tensor is a weft::Error.
  template <class... Index>
    requires(detail::ElementIndex<Index> && ...)
  const T& operator()(Index... index) const {
    return *element_pointer({std::int64_t(index)...});
  }

 protected:
  TensorBase() = default;
  TensorBase(std::shared_ptr<Storage> storage, Shape shape, Strides strides, std::int64_t offset)
      : storage_(std::move(storage)), shape_(shape), strides_(strides), offset_(offset) {}

  /// Address of element (0, ..., 0); on a CUDA tensor, a device address.
  T* element_address() const { return storage_ ? static_cast<T*>(storage_->data()) + offset_ : nullptr; }

  /// One view's shape, strides and offset over this storage.
  struct Layout {
    Shape shape;
    Strides strides;
    std::int64_t offset;
  };
  Layout layout() const { return {shape_, strides_, offset_}; }

  /// Address of element `index` (one per dim, negative from the end) on the host, checked.
  T* element_pointer(std::initializer_list<std::int64_t> index) const {
    const char* op = "operator()";
    if (!defined()) detail::fail(op, "the tensor is undefined (default-constructed): it has no elements");
    if (std::int64_t(index.size()) != dim())
      detail::fail(op, "got ", index.size(), index.size() == 1 ? " index" : " indices", " for a tensor of shape ",
                   shape_, "; give one index per dim (", dim(), ")");
    if (!device().is_cpu())
      detail::fail(op, "element access reads host memory, but this tensor of shape ", shape_, " is on ", device(),
                   "; copy it with .to(Device::cpu()) first, or read one element with t[i][j].item()");
    std::int64_t at = offset_;
    int d = 0;
    for (std::int64_t i : index) {
      const std::int64_t n = shape_[d];
      if (i < -n || i >= n)
        detail::fail(op, "index ", i, " is out of range for dim ", d, " of shape ", shape_, "; dim ", d,
                     " takes indices from ", -n, " to ", n - 1);
      at += (i < 0 ? i + n : i) * strides_[d];
      ++d;
    }
    return static_cast<T*>(storage_->data()) + at;
  }

  Layout slice_layout(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step) const {
    int d = wrap_dim("slice", dim, this->dim());
    if (step <= 0) detail::fail("slice", "step must be positive, got ", step);
    std::int64_t n = shape_[d];
    auto clamp = [n](std::int64_t i) { return std::clamp<std::int64_t>(i < 0 ? i + n : i, 0, n); };
    start = clamp(start);
    end = std::max(clamp(end), start);
    Layout out = layout();
    out.offset += start * strides_[d];
    out.shape[d] = (end - start + step - 1) / step;
    out.strides[d] *= step;
    return out;
  }
  Layout narrow_layout(std::int64_t dim, std::int64_t start, std::int64_t length) const {
    int d = wrap_dim("narrow", dim, this->dim());
    if (start < 0) start += shape_[d];
    if (start < 0 || length < 0 || start + length > shape_[d])
      detail::fail("narrow", "range [", start, ", ", start + length, ") does not fit dim ", d, " of shape ",
                   shape_);
    return slice_layout(d, start, start + length, 1);
  }
  Layout select_layout(std::int64_t dim, std::int64_t index) const {
    int d = wrap_dim("select", dim, this->dim());
    if (index < -shape_[d] || index >= shape_[d])
      detail::fail("select", "index ", index, " is out of range for dim ", d, " of shape ", shape_);
    if (index < 0) index += shape_[d];
    Layout out = layout();
    out.offset += index * strides_[d];
    out.shape.erase(d);
    out.strides.erase(d);
    return out;
  }
  /// torch's t(): a matrix transposed; 0-D and 1-D as they are.
  Layout t_layout() const {
    if (dim() > 2)
      detail::fail("t", "needs a tensor of at most 2 dims, got shape ", shape_,
                   "; use transpose(-2, -1) to swap the last two dims");
    return dim() == 2 ? transpose_layout(0, 1) : layout();
  }
  Layout transpose_layout(std::int64_t dim0, std::int64_t dim1) const {
    int a = wrap_dim("transpose", dim0, dim()), b = wrap_dim("transpose", dim1, dim());
    Layout out = layout();
    std::swap(out.shape[a], out.shape[b]);
    std::swap(out.strides[a], out.strides[b]);
    return out;
  }
  Layout permute_layout(const std::vector<std::int64_t>& dims) const {
    if (int(dims.size()) != dim()) detail::fail("permute", "got ", dims.size(), " dims for a tensor of shape ", shape_);
    std::vector<bool> seen(dim(), false);
    Layout out = layout();
    for (int i = 0; i < dim(); ++i) {
      int d = wrap_dim("permute", dims[i], dim());
      if (seen[d]) detail::fail("permute", "dim ", d, " repeats; dims must be a permutation");
      seen[d] = true;
      out.shape[i] = shape_[d];
      out.strides[i] = strides_[d];
    }
    return out;
  }
  Layout unsqueeze_layout(std::int64_t dim) const {
    int d = wrap_dim("unsqueeze", dim, this->dim() + 1);
    Layout out = layout();
    out.shape.insert(d, 1);
    out.strides.insert(d, d < this->dim() ? strides_[d] * shape_[d] : 1);
    return out;
  }
  Layout squeeze_layout(std::int64_t dim) const {
    int d = wrap_dim("squeeze", dim, this->dim());
    Layout out = layout();
    if (shape_[d] != 1) return out;
    out.shape.erase(d);
    out.strides.erase(d);
    return out;
  }
  /// Size-1 dims (and new leading dims) repeat with stride 0; -1 keeps a dim.
  Layout expand_layout(Shape to) const {
    int lead = to.rank() - dim();
    bool valid = lead >= 0;  // checked first: a lower rank would index shape_ at negative dims
    for (int d = std::max(lead, 0); valid && d < to.rank(); ++d)
      if (to[d] == -1) to[d] = shape_[d - lead];
    for (std::int64_t e : to) valid = valid && e >= 0;  // -1 only keeps an existing dim
    if (!valid || !broadcasts_to(shape_, to))
      detail::fail("expand", "cannot expand shape ", shape_, " to ", to,
                   "; only size-1 dims (and new leading dims) can grow");
    return {to, broadcast_strides(shape_, strides_, to), offset_};
  }
  /// Same elements, new shape; needs a contiguous view (reshape copies otherwise).
  Layout view_layout(Shape to) const {
    to = infer_reshape("view", to);
    if (!is_contiguous())
      detail::fail("view", "tensor of shape ", shape_, " and strides ", strides_,
                   " is not contiguous; call reshape() (which copies) or contiguous() first");
    return {to, contiguous_strides(to), offset_};
  }

  std::shared_ptr<Storage> storage_;
  Shape shape_;
  Strides strides_;
  std::int64_t offset_ = 0;

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
};

/// A handle to elements that tensors own, like Eigen's Map or std::span, except that it keeps
/// its storage alive. Copying a view copies the handle; ASSIGNING to a view writes the elements
/// it shows (the right-hand side broadcasts to the view, whose shape never changes).
/// `TensorView<const T>` is read-only: what a const Tensor gives, and what functions that only
/// read take. Constness lives in the element type, as in std::span: a const handle to writable
/// elements still writes.
template <class E>
  requires Element<std::remove_const_t<E>>
class TensorView : public TensorBase<std::remove_const_t<E>>, public InPlaceMethods<TensorView<E>> {
  using Base = TensorBase<std::remove_const_t<E>>;
  using Layout = typename Base::Layout;

 public:
  using value_type = std::remove_const_t<E>;
  using element_type = E;
  static constexpr bool kWritable = !std::is_const_v<E>;

  /// Views nothing: defined() is false.
  TensorView() = default;
  TensorView(const TensorView&) = default;
  TensorView(TensorView&&) noexcept = default;
  ~TensorView() = default;
  /// A view of `storage` (factories, views and interop build views this way).
  TensorView(std::shared_ptr<Storage> storage, Shape shape, Strides strides, std::int64_t offset)
      : Base(std::move(storage), shape, strides, offset) {}
  /// A read-only view of writable elements.
  template <class V>
    requires(!kWritable && std::is_same_v<V, value_type>)
  TensorView(const TensorView<V>& view) : Base(view.storage(), view.shape(), view.strides(), view.offset()) {}
  /// A view of all of a tensor's elements, read-only from a const tensor. A temporary tensor's
  /// elements stay alive as long as the view. (A template, so that nothing converts to a Tensor
  /// on the way: a read-only view never becomes a writable view of a copy.)
  template <class X>
    requires std::is_same_v<std::remove_cvref_t<X>, Tensor<value_type>> &&
             (!kWritable || !std::is_const_v<std::remove_reference_t<X>>)
  TensorView(X&& tensor) : TensorView(tensor.view()) {}  // NOLINT: implicit, as Eigen's Ref

  /// Writes other's elements into this view's (broadcasting).
  WEFT_ABI_INLINE TensorView& operator=(const TensorView& other) { return write<detail::AssignKind::set>(other); }
  template <class Source>
  WEFT_ABI_INLINE TensorView& operator=(const Source& source) { return write<detail::AssignKind::set>(source); }
  template <class Source>
  WEFT_ABI_INLINE TensorView& operator+=(const Source& source) { return write<detail::AssignKind::add>(source); }
  template <class Source>
  WEFT_ABI_INLINE TensorView& operator-=(const Source& source) { return write<detail::AssignKind::sub>(source); }
  template <class Source>
  WEFT_ABI_INLINE TensorView& operator*=(const Source& source) { return write<detail::AssignKind::mul>(source); }
  template <class Source>
  WEFT_ABI_INLINE TensorView& operator/=(const Source& source) { return write<detail::AssignKind::div>(source); }

  /// Address of element (0, ..., 0); on a CUDA tensor, a device address.
  E* data() const { return this->element_address(); }

  /// Element (i, j, ...), as TensorBase::operator() checks it; writable unless E is const.
  template <class... Index>
    requires(detail::ElementIndex<Index> && ...)
  E& operator()(Index... index) const {
    return *this->element_pointer({std::int64_t(index)...});
  }

  // ---- views of the same elements ------------------------------------------------------------
  /// Elements start, start+step, ... below end along dim (Python slice semantics, step > 0).
  TensorView slice(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step = 1) const {
    return with(this->slice_layout(dim, start, end, step));
  }
  /// `length` elements from `start` along dim; the range must lie inside the view.
  TensorView narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const {
    return with(this->narrow_layout(dim, start, length));
  }
  /// The slice at `index` along dim, with that dim removed.
  TensorView select(std::int64_t dim, std::int64_t index) const { return with(this->select_layout(dim, index)); }
  /// select(0, index), so that t[i][j] reads like torch's (a 0-dim view: `.item()`, or assign).
  TensorView operator[](std::int64_t index) const { return select(0, index); }
  /// torch's t(): a 2-D view transposed; 0-D and 1-D views as they are.
  TensorView t() const { return with(this->t_layout()); }
  TensorView transpose(std::int64_t dim0, std::int64_t dim1) const { return with(this->transpose_layout(dim0, dim1)); }
  /// out.shape[i] = shape[dims[i]]; dims must be a permutation of 0..dim()-1.
  TensorView permute(const std::vector<std::int64_t>& dims) const { return with(this->permute_layout(dims)); }
  TensorView permute(std::initializer_list<std::int64_t> dims) const { return permute(std::vector<std::int64_t>(dims)); }
  TensorView unsqueeze(std::int64_t dim) const { return with(this->unsqueeze_layout(dim)); }
  /// Removes dim when its extent is 1 (otherwise the same view).
  TensorView squeeze(std::int64_t dim) const { return with(this->squeeze_layout(dim)); }
  /// Broadcast view: size-1 dims (and new leading dims) repeat with stride 0; -1 keeps a dim.
  TensorView expand(Shape to) const { return with(this->expand_layout(to)); }
  /// Same elements, new shape; needs a contiguous view (use reshape otherwise).
  TensorView view(Shape to) const { return with(this->view_layout(to)); }
  /// This view itself.
  TensorView view() const { return *this; }
  /// A view with the new shape: of these elements when contiguous, else of a contiguous copy.
  WEFT_ABI_INLINE TensorView reshape(Shape to) const { return contiguous().view(to); }
  /// These elements when contiguous (no copy), else a view of a new contiguous copy.
  WEFT_ABI_INLINE TensorView contiguous() const {
    if (this->is_contiguous()) return *this;
    return TensorView<value_type>(this->clone());
  }

 private:
  TensorView with(const Layout& l) const { return TensorView(this->storage_, l.shape, l.strides, l.offset); }

  template <detail::AssignKind kind, class Source>
  WEFT_ABI_INLINE TensorView& write(const Source& source) {
    static_assert(kWritable,
                  "weft: this view is read-only (a view of a const tensor, or a TensorView<const T>); "
                  "write through a view of a non-const tensor");
    if constexpr (kWritable) detail::assign_into<kind>(*this, source);
    return *this;
  }
};

}  // namespace weft

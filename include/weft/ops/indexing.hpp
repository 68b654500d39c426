// SPDX-License-Identifier: MIT
/// @file Indexing: index_select, gather and embedding (new tensors), index_add and scatter_add (in place: their backward), embedding_backward, masked_fill (an expression).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/backend/indexing.hpp"
#include "weft/ops/factories.hpp"
#include "weft/ops/materialize.hpp"
#include "weft/expr/operators.hpp"

namespace weft {
namespace detail {

/// Index tensors hold int64 or int32 (torch.long, torch.int).
template <class I>
inline constexpr bool is_index_dtype_v = std::is_same_v<I, std::int64_t> || std::is_same_v<I, std::int32_t>;

template <class T>
void check_defined(const char* op, const TensorBase<T>& t, const char* role) {
  if (!t.defined()) fail(op, role, " is an empty (default-constructed) tensor");
}

template <class T, class U>
void check_same_device(const char* op, const TensorBase<T>& a, const char* role_a, const TensorBase<U>& b,
                       const char* role_b) {
  if (a.device() != b.device())
    fail(op, role_a, " (shape ", a.shape(), ") is on ", a.device(), " but ", role_b, " (shape ", b.shape(), ") is on ",
         b.device(), "; move them to one device with .to(device)");
}

template <class T>
void check_rank(const char* op, const TensorBase<T>& t, const char* role, int rank, const char* fix) {
  if (t.dim() != rank) fail(op, role, " has shape ", t.shape(), " but needs ", rank, " dim(s); ", fix);
}

/// The checks every op along a dim starts with: defined operands, an input (`role`) of at least
/// one dim; then the dim wrapped into [0, rank).
template <class T, class I>
int indexed_dim(const char* op, const TensorBase<T>& x, const char* role, std::int64_t dim,
                const TensorBase<I>& index) {
  check_defined(op, x, role);
  check_defined(op, index, "index");
  if (x.dim() == 0) fail(op, role, " is zero-dimensional (shape []); it needs at least 1 dim");
  return wrap_dim_of(op, dim, x.shape());
}

/// The element bytes a view spans, [first, last] (for overlap checks).
template <class T>
std::pair<const char*, const char*> byte_span(const TensorBase<T>& t) {
  const char* base = reinterpret_cast<const char*>(t.data());
  std::int64_t lo = 0, hi = 0;  // offsets of the lowest and highest element
  for (int d = 0; d < t.dim(); ++d) (t.strides()[d] < 0 ? lo : hi) += (t.shape()[d] - 1) * t.strides()[d];
  return {base + lo * std::int64_t(sizeof(T)), base + (hi + 1) * std::int64_t(sizeof(T)) - 1};
}

/// An in-place target whose elements are distinct and that source does not overlap: additions
/// read what they write, so an element seen twice, or a source written while it is read, would
/// make the result depend on the order of the additions.
template <class T>
void check_target_alone(const char* op, const TensorView<T>& target, const TensorView<const T>& source) {
  if (target.numel() == 0) return;
  for (int d = 0; d < target.dim(); ++d)
    if (target.shape()[d] > 1 && target.strides()[d] == 0)
      fail(op, "target (shape ", target.shape(), ", strides ", target.strides(), ") repeats its elements along dim ",
           d, " (an expanded view); write into a tensor with distinct elements, e.g. target.clone()");
  if (source.numel() == 0 || source.storage() != target.storage()) return;
  const auto [lo, hi] = byte_span(target);
  const auto [source_lo, source_hi] = byte_span(source);
  if (source_lo <= hi && lo <= source_hi)
    fail(op, "source (shape ", source.shape(), ") overlaps target (shape ", target.shape(),
         ") in memory; pass a copy, source.clone()");
}

/// index.size(d) <= other.size(d) for every d but `skip` (-1: none), the rule of gather and
/// scatter_add, or a weft::Error naming the dim.
inline void check_index_extents(const char* op, const Shape& index, const Shape& other, int skip, const char* role) {
  for (int d = 0; d < index.rank(); ++d)
    if (d != skip && index[d] > other[d])
      fail(op, "index of shape ", index, " is larger than ", role, " (shape ", other, ") in dim ", d, " (", index[d],
           " > ", other[d], "); index.size(d) <= ", role, ".size(d) is needed", skip >= 0 ? " for d != dim" : "");
}

/// The error of index value `value` at flat position p of the index: the value, its position,
/// the dim and the valid range.
[[noreturn, gnu::cold]] inline void fail_index_value(const char* op, std::int64_t value, std::int64_t p,
                                                     const Shape& index_shape, std::int64_t limit, int dim,
                                                     const char* role, const Shape& shape) {
  std::int64_t coords[kMaxRank] = {};
  unravel(p, index_shape.begin(), index_shape.rank(), coords);
  std::string at;
  for (int d = 0; d < index_shape.rank(); ++d) at += cat(d ? ", " : "", coords[d]);
  fail(op, "index value ", value, " at position [", at, "] of the index (shape ", index_shape,
       ") is out of range for dim ", dim, " of ", role, " (shape ", shape, "); valid indices lie in [0, ", limit, ")",
       limit == 0 ? ", which is empty" : "");
}

inline namespace WEFT_BACKEND_ABI {

/// Every index value lies in [0, limit), or a weft::Error naming the first that does not, its
/// position in the index and the valid range. A CPU index is read in place; a CUDA index through
/// a host copy (on a GPU the check costs a device-to-host copy of the index, and waits for it).
template <class I>
void check_index_values(const char* op, const TensorView<const I>& index, std::int64_t limit, int dim,
                        const char* role, const Shape& shape) {
  const std::int64_t n = index.numel();
  auto valid = [limit](std::int64_t v) { return v >= 0 && v < limit; };
  if (index.device().is_cpu() && !index.is_contiguous()) {
    for (std::int64_t p = 0; p < n; ++p) {
      const I v = index.data()[strided_offset(p, index.shape(), index.strides())];
      if (!valid(v)) fail_index_value(op, v, p, index.shape(), limit, dim, role, shape);
    }
    return;
  }
  std::vector<I> copy;
  const I* values = index.data();
  if (index.device().is_cuda()) {
    copy = index.to_vector();
    values = copy.data();
  }
  // A negative value wraps to a large unsigned one: one comparison per value, in a loop the
  // compiler vectorizes; the culprit is searched for only on failure.
  bool outside = false;
  for (std::int64_t p = 0; p < n; ++p) outside |= std::uint64_t(std::int64_t(values[p])) >= std::uint64_t(limit);
  if (!outside) return;
  std::int64_t p = 0;
  while (valid(values[p])) ++p;
  fail_index_value(op, values[p], p, index.shape(), limit, dim, role, shape);
}

template <class T, class I>
Tensor<T> index_select_impl(const TensorView<const T>& x, std::int64_t dim, const TensorView<const I>& index) {
  const char* op = "index_select";
  const int d = indexed_dim(op, x, "the input", dim, index);
  check_rank(op, index, "index", 1, "pass a 1-D index (flatten it with .reshape({-1}))");
  check_same_device(op, x, "the input", index, "index");
  check_executor_for(op, x.device());
  check_index_values(op, index, x.shape()[d], d, "the input", x.shape());
  Shape shape = x.shape();
  shape[d] = index.numel();
  Tensor<T> out = empty<T>(shape, x.device());
  if (out.numel() > 0) run_index_select(out.data(), x, d, index);
  return out;
}

template <class T, class I>
Tensor<T> gather_impl(const TensorView<const T>& x, std::int64_t dim, const TensorView<const I>& index) {
  const char* op = "gather";
  const int d = indexed_dim(op, x, "the input", dim, index);
  check_rank(op, index, "index", x.dim(), "index needs the input's rank (torch.gather)");
  check_index_extents(op, index.shape(), x.shape(), d, "the input");
  check_same_device(op, x, "the input", index, "index");
  check_executor_for(op, x.device());
  check_index_values(op, index, x.shape()[d], d, "the input", x.shape());
  Tensor<T> out = empty<T>(index.shape(), x.device());
  if (out.numel() > 0) run_gather(out.data(), x, d, index);
  return out;
}

template <class T, class I>
Tensor<T> embedding_impl(const TensorView<const T>& weight, const TensorView<const I>& index) {
  const char* op = "embedding";
  check_defined(op, weight, "weight");
  check_defined(op, index, "index");
  check_rank(op, weight, "weight", 2, "weight is [num_embeddings, embedding_dim]");
  if (index.dim() == kMaxRank)
    fail(op, "index of shape ", index.shape(), " has the maximum rank ", kMaxRank, "; the output adds a dim");
  check_same_device(op, weight, "weight", index, "index");
  check_executor_for(op, weight.device());
  check_index_values(op, index, weight.shape()[0], 0, "weight", weight.shape());
  Shape shape = index.shape();
  shape.push_back(weight.shape()[1]);
  Tensor<T> out = empty<T>(shape, weight.device());
  if (out.numel() > 0) run_index_select(out.data(), weight, 0, index.reshape(Shape{index.numel()}));
  return out;
}

template <class T, class I>
void index_add_impl(const TensorView<T>& target, std::int64_t dim, const TensorView<const I>& index,
                    const TensorView<const T>& source, T alpha) {
  const char* op = "index_add";
  const int d = indexed_dim(op, target, "target", dim, index);
  check_defined(op, source, "source");
  check_rank(op, index, "index", 1, "pass a 1-D index (flatten it with .reshape({-1}))");
  Shape want = target.shape();
  want[d] = index.numel();
  if (!(source.shape() == want))
    fail(op, "source has shape ", source.shape(), " but target of shape ", target.shape(), " and an index of ",
         index.numel(), " values along dim ", d, " need source of shape ", want,
         " (target's shape with dim ", d, " replaced by the index's length)");
  check_same_device(op, target, "target", index, "index");
  check_same_device(op, target, "target", source, "source");
  check_executor_for(op, target.device());
  check_target_alone(op, target, source);
  check_index_values(op, index, target.shape()[d], d, "target", target.shape());
  run_scatter_add(target, source, index.data(), along_dim(target.dim(), d, index.strides()[0]), source.shape(), d,
                  alpha);
}

template <class T, class I>
void scatter_add_impl(const TensorView<T>& target, std::int64_t dim, const TensorView<const I>& index,
                      const TensorView<const T>& source) {
  const char* op = "scatter_add";
  const int d = indexed_dim(op, target, "target", dim, index);
  check_defined(op, source, "source");
  check_rank(op, index, "index", target.dim(), "index needs target's rank (torch.scatter_add)");
  check_rank(op, source, "source", target.dim(), "source needs target's rank (torch.scatter_add)");
  check_index_extents(op, index.shape(), source.shape(), -1, "source");
  check_index_extents(op, index.shape(), target.shape(), d, "target");
  check_same_device(op, target, "target", index, "index");
  check_same_device(op, target, "target", source, "source");
  check_executor_for(op, target.device());
  check_target_alone(op, target, source);
  check_index_values(op, index, target.shape()[d], d, "target", target.shape());
  run_scatter_add(target, source, index.data(), index.strides(), index.shape(), d, T(1));
}

template <class T, class I>
Tensor<T> embedding_backward_impl(const TensorView<const T>& grad_out, const TensorView<const I>& index,
                                  std::int64_t num_embeddings) {
  const char* op = "embedding_backward";
  check_defined(op, grad_out, "grad_out");
  check_defined(op, index, "index");
  if (num_embeddings < 0) fail(op, "num_embeddings must be >= 0, got ", num_embeddings);
  bool fits = grad_out.dim() == index.dim() + 1;
  for (int d = 0; fits && d < index.dim(); ++d) fits = grad_out.shape()[d] == index.shape()[d];
  if (!fits)
    fail(op, "grad_out has shape ", grad_out.shape(), " but an index of shape ", index.shape(),
         " needs grad_out of shape [index's shape..., embedding_dim]");
  check_same_device(op, grad_out, "grad_out", index, "index");
  check_executor_for(op, index.device());
  const std::int64_t n = index.numel(), c = grad_out.shape()[grad_out.dim() - 1];
  check_index_values(op, index, num_embeddings, 0, "the gradient of weight", Shape{num_embeddings, c});
  Tensor<T> grad_weight = zeros<T>(Shape{num_embeddings, c}, grad_out.device());
  if (n * c > 0)
    run_scatter_add(grad_weight.view(), grad_out.reshape(Shape{n, c}), index.reshape(Shape{n}).data(),
                    along_dim(2, 0, 1), Shape{n, c}, 0, T(1));
  return grad_weight;
}

}  // namespace WEFT_BACKEND_ABI

/// value as a number of T's kind (bool, int64 or double), so that where() keeps T's dtype (a
/// number lifts only the category); a value outside an integer T's range is refused.
template <class T, class V>
auto number_of_kind(const char* op, V value) {
  if constexpr (std::is_same_v<T, bool>) {
    return bool(value);
  } else if constexpr (std::is_integral_v<T>) {
    using limits = std::numeric_limits<T>;
    if (!(double(value) >= double(limits::lowest()) && double(value) <= double(limits::max())))
      fail(op, "value ", value, " does not fit the input's dtype ", dtype_name<T>(), "; cast the input first");
    return std::int64_t(value);
  } else {
    return double(value);
  }
}

/// A writable view of an in-place op's target (a Tensor<T> or TensorView<T>).
template <class Target>
auto writable_view(Target& target) {
  auto view = target.view();
  static_assert(decltype(view)::kWritable,
                "weft: the in-place op's target is read-only (a const tensor or a TensorView<const T>); pass a "
                "Tensor<T> or TensorView<T>");
  return view;
}

}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// index_select(x, dim, index): out[..., i, ...] = x[..., index[i], ...] along `dim` (torch.index_select);
/// out has x's shape with dim's extent replaced by index's length. `index` is 1-D, int64 or int32,
/// with values in [0, x.size(dim)) (negative values are refused, as in PyTorch). CPU: a memcpy per
/// contiguous block.
template <Operand X, Operand Idx>
  requires HasTensorOperand<X> && HasTensorOperand<Idx>
Tensor<detail::operand_dtype_t<X>> index_select(const X& x, std::int64_t dim, const Idx& index) {
  static_assert(detail::is_index_dtype_v<detail::operand_dtype_t<Idx>>,
                "weft::index_select: index needs dtype int64 or int32");
  return detail::index_select_impl(detail::materialize(x), dim, detail::materialize(index));
}

/// gather(x, dim, index): out[i][j][k] = x[index[i][j][k]][j][k] for dim 0 (likewise for other
/// dims; torch.gather). index has x's rank, index.size(d) <= x.size(d) for d != dim, and out has
/// index's shape.
template <Operand X, Operand Idx>
  requires HasTensorOperand<X> && HasTensorOperand<Idx>
Tensor<detail::operand_dtype_t<X>> gather(const X& x, std::int64_t dim, const Idx& index) {
  static_assert(detail::is_index_dtype_v<detail::operand_dtype_t<Idx>>,
                "weft::gather: index needs dtype int64 or int32");
  return detail::gather_impl(detail::materialize(x), dim, detail::materialize(index));
}

/// embedding(weight, index): out[..., :] = weight[index[...], :] (torch.nn.functional.embedding):
/// weight is [num_embeddings, C], index any shape, out [index's shape..., C]. CPU: one row memcpy
/// per index (OpenMP over the output).
template <Operand W, Operand Idx>
  requires HasTensorOperand<W> && HasTensorOperand<Idx>
Tensor<detail::operand_dtype_t<W>> embedding(const W& weight, const Idx& index) {
  static_assert(detail::is_index_dtype_v<detail::operand_dtype_t<Idx>>,
                "weft::embedding: index needs dtype int64 or int32");
  return detail::embedding_impl(detail::materialize(weight), detail::materialize(index));
}

/// index_add(target, dim, index, source, alpha = 1), in place (torch's index_add_):
/// target[..., index[i], ...] += alpha * source[..., i, ...]. index is 1-D (int64 or int32);
/// source has target's shape with dim's extent replaced by index's length; repeated indices
/// accumulate. CPU: the additions into each element happen in index order whatever the thread
/// count (bitwise reproducible); CUDA: atomics, whose order (and so the last bits of a float sum)
/// varies from run to run. 16-bit floats add in float and round at each addition. Every index is
/// checked before target is written.
template <class Target, Operand Idx, Operand Src>
  requires SingleTensor<Target> && HasTensorOperand<Idx> && HasTensorOperand<Src>
void index_add(Target&& target, std::int64_t dim, const Idx& index, const Src& source,
               typename std::remove_cvref_t<Target>::value_type alpha = 1) {
  using T = typename std::remove_cvref_t<Target>::value_type;
  static_assert(!std::is_same_v<T, bool>, "weft::index_add: bool tensors cannot be added; cast to a number type");
  static_assert(std::is_same_v<detail::operand_dtype_t<Src>, T>,
                "weft::index_add: source needs target's dtype; use weft::cast<T>(source)");
  static_assert(detail::is_index_dtype_v<detail::operand_dtype_t<Idx>>,
                "weft::index_add: index needs dtype int64 or int32");
  detail::index_add_impl(detail::writable_view(target), dim, detail::materialize(index),
                         detail::materialize(source), alpha);
}

/// scatter_add(target, dim, index, source), in place (torch's scatter_add_): for dim 0,
/// target[index[i][j]][j] += source[i][j] (likewise for other dims and ranks). index, source and
/// target have one rank; index.size(d) <= source.size(d) for every d and <= target.size(d) for
/// d != dim. CPU: each element's additions happen in the row-major order of index, whatever the
/// thread count; CUDA: atomics (order not fixed). 16-bit floats round at each addition.
template <class Target, Operand Idx, Operand Src>
  requires SingleTensor<Target> && HasTensorOperand<Idx> && HasTensorOperand<Src>
void scatter_add(Target&& target, std::int64_t dim, const Idx& index, const Src& source) {
  using T = typename std::remove_cvref_t<Target>::value_type;
  static_assert(!std::is_same_v<T, bool>, "weft::scatter_add: bool tensors cannot be added; cast to a number type");
  static_assert(std::is_same_v<detail::operand_dtype_t<Src>, T>,
                "weft::scatter_add: source needs target's dtype; use weft::cast<T>(source)");
  static_assert(detail::is_index_dtype_v<detail::operand_dtype_t<Idx>>,
                "weft::scatter_add: index needs dtype int64 or int32");
  detail::scatter_add_impl(detail::writable_view(target), dim, detail::materialize(index),
                           detail::materialize(source));
}

/// embedding_backward(grad_out, index, num_embeddings): the gradient of embedding's weight,
/// [num_embeddings, C] = zeros, then row index[...] += grad_out[..., :] (index_add along dim 0 of
/// the flattened index; the same order guarantees). grad_out is [index's shape..., C].
template <Operand G, Operand Idx>
  requires HasTensorOperand<G> && HasTensorOperand<Idx>
Tensor<detail::operand_dtype_t<G>> embedding_backward(const G& grad_out, const Idx& index,
                                                      std::int64_t num_embeddings) {
  static_assert(!std::is_same_v<detail::operand_dtype_t<G>, bool>,
                "weft::embedding_backward: bool gradients cannot be added");
  static_assert(detail::is_index_dtype_v<detail::operand_dtype_t<Idx>>,
                "weft::embedding_backward: index needs dtype int64 or int32");
  return detail::embedding_backward_impl(detail::materialize(grad_out), detail::materialize(index), num_embeddings);
}

}  // namespace WEFT_BACKEND_ABI

/// masked_fill(x, mask, value) = where(mask, value, x): value where mask is true, x elsewhere
/// (torch.masked_fill; mask is bool and broadcasts with x). An expression of x's dtype: nothing
/// runs until it is assigned. A value outside an integer x's range is refused.
template <Operand X, Operand M, Number V>
  requires HasTensorOperand<X>
auto masked_fill(const X& x, const M& mask, V value) {
  using T = detail::operand_dtype_t<X>;
  static_assert(std::is_same_v<detail::operand_dtype_t<M>, bool>,
                "weft::masked_fill needs a bool mask; compare first, e.g. masked_fill(x, m != 0, v)");
  return where(mask, detail::number_of_kind<T>("masked_fill", value), x);
}

}  // namespace weft

// SPDX-License-Identifier: MIT
/// @file Joining and splitting: cat of expressions (one kernel), cat and stack of runtime lists (new tensors), split and chunk (views).
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "weft/backend/indexing.hpp"
#include "weft/ops/factories.hpp"
#include "weft/ops/materialize.hpp"
#include "weft/expr/dense.hpp"

namespace weft {
namespace detail {

/// Read-only views of a list's tensors (no element is copied).
template <class List>
auto const_views(const List& tensors) {
  using T = typename std::remove_cvref_t<decltype(*std::begin(tensors))>::value_type;
  std::vector<TensorView<const T>> views;
  views.reserve(tensors.size());
  for (const auto& t : tensors) views.push_back(t.view());
  return views;
}

/// The checks cat and stack share: a non-empty list of defined tensors on one device. `xs` holds
/// views or CatOperands (anything with defined(), device() and shape()).
template <class Xs>
void check_operands(const char* op, const Xs& xs) {
  if (xs.empty()) fail(op, "needs at least one tensor, got an empty list");
  for (std::size_t k = 0; k < xs.size(); ++k) {
    if (!xs[k].defined()) fail(op, "operand ", k, " is an empty (default-constructed) tensor");
    if (xs[k].device() != xs[0].device())
      fail(op, "operand ", k, " (shape ", xs[k].shape(), ") is on ", xs[k].device(), " but operand 0 (shape ",
           xs[0].shape(), ") is on ", xs[0].device(), "; move them to one device with .to(device)");
  }
}

/// Every operand's shape equals operand 0's except at `free_dim` (-1: none), or a weft::Error
/// naming the operand, the dim and `rule`.
template <class Xs>
void check_shapes(const char* op, const Xs& xs, int free_dim, const char* rule) {
  const Shape& s0 = xs[0].shape();
  for (std::size_t k = 1; k < xs.size(); ++k) {
    const Shape& s = xs[k].shape();
    if (s.rank() != s0.rank())
      fail(op, "operand ", k, " has shape ", s, " of rank ", s.rank(), " but operand 0 has shape ", s0, " of rank ",
           s0.rank(), "; all operands need the same rank");
    for (int e = 0; e < s.rank(); ++e)
      if (e != free_dim && s[e] != s0[e])
        fail(op, "operand ", k, " has shape ", s, " but operand 0 has shape ", s0, ": they differ in dim ", e, " (",
             s[e], " vs ", s0[e], "); ", rule);
  }
}

inline namespace WEFT_BACKEND_ABI {

/// Checked operands joined along dim d: the output, then one pass over it.
template <class T>
Tensor<T> cat_checked(const char* op, const std::vector<TensorView<const T>>& xs, int d) {
  Shape shape = xs[0].shape();
  shape[d] = 0;
  for (const TensorView<const T>& x : xs) shape[d] += x.shape()[d];
  check_executor_for(op, xs[0].device());
  Tensor<T> out = empty<T>(shape, xs[0].device());
  if (out.numel() > 0) run_cat(out.view(), xs, d);
  return out;
}

/// torch.cat's checks (operands on one device, of one rank >= 1, equal but at `dim`); returns
/// `dim` wrapped.
template <class Xs>
int check_cat(const char* op, const Xs& xs, std::int64_t dim) {
  check_operands(op, xs);
  if (xs[0].shape().rank() == 0)
    fail(op, "operand 0 is zero-dimensional (shape []); cat joins tensors of at least 1 dim (weft::stack joins "
             "zero-dimensional ones)");
  const int d = wrap_dim_of(op, dim, xs[0].shape());
  check_shapes(op, xs, d, "every dim but the cat dim must match");
  return d;
}

template <class T>
Tensor<T> cat_views(const std::vector<TensorView<const T>>& xs, std::int64_t dim) {
  return cat_checked("cat", xs, check_cat("cat", xs, dim));
}

/// What cat checks of an expression operand: the shape its tensors broadcast to and their device.
struct CatOperand {
  Shape extents;
  Device place = Device::cpu();

  bool defined() const { return true; }
  Device device() const { return place; }
  const Shape& shape() const { return extents; }
};

/// Operand k of cat(dim, e...): its tensors defined, on one device, broadcasting together.
template <class E>
CatOperand cat_operand(const char* op, std::size_t k, const E& e) {
  CatOperand x;
  bool have_device = false, broadcast = true;
  std::vector<Shape> leaves;
  for_each_leaf(e, [&](const auto& leaf) {
    const auto& t = leaf.tensor;
    if (!t.defined()) fail(op, "operand ", k, " reads an empty (default-constructed) tensor");
    if (!have_device) x.place = t.device(), have_device = true;
    else if (t.device() != x.place)
      fail(op, "operand ", k, " reads tensors on ", x.place, " and on ", t.device(),
           "; move them to one device with .to(device)");
    leaves.push_back(t.shape());
    broadcast = broadcast && broadcast_into(x.extents, t.shape());
  });
  if (!broadcast) fail_broadcast(op, leaves);
  return x;
}

/// out.narrow(d, offset_k, extent_k) = e_k for every operand k, as ONE kernel (fuse of statements of
/// different shapes; one pointwise kernel when the extents are equal).
template <class T, class... Es>
void cat_into(const TensorView<T>& out, int d, const std::vector<CatOperand>& xs, const Es&... es) {
  std::int64_t offset = 0;
  std::size_t k = 0;
  auto slice = [&](const auto& e) {
    const std::int64_t n = xs[k++].shape()[d];
    auto statement = assign(out.narrow(d, offset, n), e);
    offset += n;
    return statement;
  };
  // Braced initialization runs left to right: slices in operand order.
  Tuple<decltype(assign(out, es))...> statements{{{slice(es)}...}};
  [&]<std::size_t... Is>(std::index_sequence<Is...>) {
    run_fused_statements("cat", get<Is>(statements)...);
  }(std::index_sequence_for<Es...>{});
}

template <class T, class... Es>
Tensor<T> cat_exprs(std::int64_t dim, const Es&... es) {
  const char* op = "cat";
  std::size_t k = 0;
  const std::vector<CatOperand> xs{cat_operand(op, k++, es)...};
  const int d = check_cat(op, xs, dim);
  Shape shape = xs[0].shape();
  shape[d] = 0;
  for (const CatOperand& x : xs) shape[d] += x.shape()[d];
  check_executor_for(op, xs[0].device());
  Tensor<T> out = empty<T>(shape, xs[0].device());
  if (out.numel() > 0) cat_into(out.view(), d, xs, es...);
  return out;
}

/// stack = cat of the operands viewed with a new dim of extent 1 at `dim`.
template <class T>
Tensor<T> stack_views(const std::vector<TensorView<const T>>& xs, std::int64_t dim) {
  const char* op = "stack";
  check_operands(op, xs);
  const int r = xs[0].dim() + 1;
  if (dim < -r || dim >= r)
    fail(op, "dim ", dim, " is out of range for stacking operands of shape ", xs[0].shape(), "; dims go from ", -r,
         " to ", r - 1);
  const int d = int(dim < 0 ? dim + r : dim);
  check_shapes(op, xs, -1, "stack needs equal shapes");
  std::vector<TensorView<const T>> rows;
  rows.reserve(xs.size());
  for (const TensorView<const T>& x : xs) rows.push_back(x.unsqueeze(d));
  return cat_checked(op, rows, d);
}

}  // namespace WEFT_BACKEND_ABI

/// The pieces of dim `d` of x of the given lengths, as views.
template <class View>
std::vector<View> split_views(const View& x, int d, const std::vector<std::int64_t>& sizes) {
  std::vector<View> pieces;
  std::int64_t at = 0;
  for (std::int64_t n : sizes) {
    pieces.push_back(x.narrow(d, at, n));
    at += n;
  }
  return pieces;
}

/// dim wrapped against x's rank; x must have a dim to split.
template <class View>
int split_dim(const char* op, const View& x, std::int64_t dim) {
  if (!x.defined()) fail(op, "the input is an empty (default-constructed) tensor");
  if (x.dim() == 0) fail(op, "cannot split a zero-dimensional tensor (shape []); it needs at least 1 dim");
  return wrap_dim_of(op, dim, x.shape());
}

}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// cat(tensors, dim): the tensors joined along `dim` (torch.cat), a new contiguous tensor. Every
/// operand has one rank, one device and the same extents except at `dim`; negative dims count
/// from the end. CPU: one pass that copies each operand's contiguous runs (OpenMP over the
/// output); CUDA: a strided copy per operand.
/// `tensors` is a std::vector of Tensor<T>, TensorView<T> or TensorView<const T>.
template <SingleTensor X>
Tensor<typename X::value_type> cat(const std::vector<X>& tensors, std::int64_t dim) {
  return detail::cat_views(detail::const_views(tensors), dim);
}
/// cat of a braced list, `cat({a, b, c}, 1)`: tensors and views of one dtype, mixed freely (each
/// is taken as a handle to its elements, TensorBase<T>).
template <Element T>
Tensor<T> cat(std::initializer_list<TensorBase<T>> tensors, std::int64_t dim) {
  return detail::cat_views(detail::const_views(tensors), dim);
}

/// cat(dim, e0, e1, ...): operands that are tensors, views or pointwise expressions joined along
/// `dim` (torch.cat's rules and errors; negative dims count from the end) into a new contiguous
/// tensor of their promoted dtype, computed by ONE kernel that writes each operand's expression
/// straight into its slice, out.narrow(dim, offset_k, extent_k) = e_k: nothing is evaluated into a
/// temporary. An operand's shape is that of its tensors broadcast together.
/// Returns Tensor<promote_t<operand dtypes...>>, spelled `auto`: a return type is substituted
/// before the constraints are checked, and detail::cat (string building) finds this overload by
/// argument-dependent lookup for calls such as cat("shape ", shape).
template <std::integral D, class... Xs>
  requires((Operand<Xs> && ...) && (... || HasTensorOperand<Xs>))
auto cat(D dim, const Xs&... xs) {
  static_assert((HasTensorOperand<Xs> && ...) && !(TensorListLike<Xs> || ...),
                "weft::cat(dim, e...): every operand is a tensor, a view or an expression reading one (a "
                "number has no shape; a TensorList goes to cat(tensors, dim))");
  // A dense operand (matmul) is evaluated first: its slice is then a copy of it.
  return detail::cat_exprs<promote_t<detail::operand_dtype_t<Xs>...>>(std::int64_t(dim),
                                                                      detail::stage_dense(detail::as_expr(xs))...);
}

/// stack(tensors, dim): the tensors (all of one shape) joined along a new dim at `dim`, in
/// [-(rank + 1), rank] (torch.stack); the result has shape [..., len(tensors) at dim, ...]. The
/// same lists as cat.
template <SingleTensor X>
Tensor<typename X::value_type> stack(const std::vector<X>& tensors, std::int64_t dim) {
  return detail::stack_views(detail::const_views(tensors), dim);
}
template <Element T>
Tensor<T> stack(std::initializer_list<TensorBase<T>> tensors, std::int64_t dim) {
  return detail::stack_views(detail::const_views(tensors), dim);
}

}  // namespace WEFT_BACKEND_ABI

/// split(x, split_size, dim): views of consecutive pieces of `split_size` along dim; the last may
/// be smaller (torch.split). A dim of extent 0 gives one empty piece (split_size may then be 0).
/// Views of a Tensor<T> or TensorView<T> write its elements; of a const one, read-only.
template <SingleTensor X>
auto split(X&& x, std::int64_t split_size, std::int64_t dim = 0) {
  const auto v = x.view();
  const int d = detail::split_dim("split", v, dim);
  const std::int64_t n = v.shape()[d];
  if (split_size < 0 || (split_size == 0 && n > 0))
    detail::fail("split", "split_size must be positive, got ", split_size, " for dim ", d, " of shape ", v.shape());
  std::vector<std::int64_t> sizes;
  for (std::int64_t at = 0; at < n; at += split_size) sizes.push_back(std::min(split_size, n - at));
  if (sizes.empty()) sizes.push_back(0);
  return detail::split_views(v, d, sizes);
}

/// split(x, sizes, dim): views of pieces of the given lengths along dim (torch.split with a list,
/// torch.split_with_sizes); the lengths are >= 0 and sum to the dim's extent.
template <SingleTensor X>
auto split(X&& x, const std::vector<std::int64_t>& sizes, std::int64_t dim = 0) {
  const auto v = x.view();
  const int d = detail::split_dim("split", v, dim);
  std::int64_t sum = 0;
  bool valid = true;
  for (std::int64_t n : sizes) sum += n, valid = valid && n >= 0;
  if (!valid || sum != v.shape()[d]) {
    std::string list;
    for (std::size_t i = 0; i < sizes.size(); ++i) list += detail::cat(i ? ", " : "", sizes[i]);
    detail::fail("split", "sizes [", list, "] ",
                 valid ? detail::cat("sum to ", sum) : std::string("include a negative size"),
                 " but dim ", d, " of shape ", v.shape(), " has ", v.shape()[d],
                 " elements; give sizes >= 0 that sum to it");
  }
  return detail::split_views(v, d, sizes);
}
template <SingleTensor X>
auto split(X&& x, std::initializer_list<std::int64_t> sizes, std::int64_t dim = 0) {
  return split(std::forward<X>(x), std::vector<std::int64_t>(sizes), dim);
}

/// chunk(x, chunks, dim): at most `chunks` views along dim, each of ceil(extent / chunks)
/// elements but the last (torch.chunk: fewer pieces when the extent does not fill them, e.g. 5
/// into 4 chunks gives 2, 2, 1); a dim of extent 0 gives `chunks` empty pieces.
template <SingleTensor X>
auto chunk(X&& x, std::int64_t chunks, std::int64_t dim = 0) {
  const auto v = x.view();
  const int d = detail::split_dim("chunk", v, dim);
  if (chunks <= 0) detail::fail("chunk", "chunks must be positive, got ", chunks, " (input shape ", v.shape(), ")");
  const std::int64_t n = v.shape()[d];
  if (n == 0) return detail::split_views(v, d, std::vector<std::int64_t>(std::size_t(chunks), 0));
  return split(v, (n + chunks - 1) / chunks, d);
}

}  // namespace weft

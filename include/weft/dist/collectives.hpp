// SPDX-License-Identifier: MIT
/// @file all_reduce, broadcast, all_gather, reduce_scatter and barrier on one Tensor or TensorView (MPI for CPU tensors, NCCL for CUDA tensors: transport.hpp).
#pragma once

#include <initializer_list>
#include <string>
#include <type_traits>

#include "weft/core/dtype.hpp"
#include "weft/core/tensor.hpp"
#include "weft/ops/factories.hpp"
#include "weft/ops/fuse.hpp"
#include "weft/dist/agreement.hpp"
#include "weft/dist/group.hpp"
#include "weft/dist/reduce_op.hpp"
#include "weft/dist/transfer.hpp"
#include "weft/dist/transport.hpp"
#include "weft/expr/operators.hpp"
#include "weft/plan/kernel_operands.hpp"

namespace weft::dist {

namespace detail {

/// A Tensor<T> or a TensorView of T (any constness): what a collective takes.
template <class X>
concept TensorArgument = is_tensor_v<std::remove_cvref_t<X>> || is_tensor_view_v<std::remove_cvref_t<X>>;

template <class X>
using element_of = typename std::remove_cvref_t<X>::value_type;

/// Whether a collective may write X's elements: a non-const Tensor or a TensorView<T>.
template <class X>
inline constexpr bool writable_v = std::is_constructible_v<TensorView<element_of<X>>, X>;

/// The Call of a collective on one tensor of `shape` on `device`. The device kind is part of the
/// call when it is not the host: a rank moving a CUDA tensor (NCCL) cannot meet one moving a CPU
/// tensor (MPI).
template <Element T>
Call tensor_call(Collective collective, const Shape& shape, Device device) {
  Call call{collective};
  call.dtype = int(dtype_of<T>);
  call.numel = shape.numel();
  call.shape_hash = hash_shape(shape);
  if (!device.is_cpu()) call.shape_hash = hash_word(call.shape_hash, std::uint64_t(device.kind()));
  return call;
}

/// "float32 [4, 8]", with " on cuda:0" when the tensor is not on the host.
inline std::string describe_on(DType dtype, const Shape& shape, Device device) {
  return describe_tensor(dtype, shape) + (device.is_cpu() ? std::string() : weft::detail::cat(" on ", device));
}

/// The non-empty ones, joined: a rank reports every problem of its input at once.
inline std::string join_errors(std::initializer_list<std::string> errors) {
  std::string s;
  for (const std::string& e : errors)
    if (!e.empty()) s += (s.empty() ? "" : "; ") + e;
  return s;
}

/// out and in of one collective live on one device.
inline std::string device_pair_error(Device out, Device in) {
  if (out == in) return "";
  return weft::detail::cat("out is on ", out, " and in on ", in, "; both must be on one device");
}

template <Element T>
std::string avg_error(ReduceOp op) {
  if (op != ReduceOp::avg || is_floating_v<T>) return "";
  return weft::detail::cat("ReduceOp::avg needs a floating-point dtype, not ", dtype_name<T>(),
                           "; reduce with sum and divide");
}

inline namespace WEFT_BACKEND_ABI {  // copies and kernels (docs/architecture.md, ODR safety)

/// The elements of x in one contiguous block: x's own when x is contiguous, else a new
/// tensor (holding x's values when `read`, packed by weft's pointwise assignment).
template <Element T>
class Staging {
 public:
  Staging(const TensorBase<T>& x, bool read) {
    if (x.is_contiguous()) {
      data_ = const_cast<T*>(x.data());
    } else {
      copy_ = read ? Tensor<T>(x) : empty<T>(x.shape(), x.device());
      data_ = copy_.data();
    }
  }
  T* data() const { return data_; }
  /// Whether the data lives in a copy (which must be written back to x).
  bool staged() const { return copy_.defined(); }
  const Tensor<T>& copy() const { return copy_; }

 private:
  Tensor<T> copy_;
  T* data_ = nullptr;
};

/// Writes a reduction's result into x: from the staging copy if there is one, divided by the
/// group size for avg (avg = sum / n).
template <Element T>
void finish_reduction(TensorView<T>& x, const Staging<T>& buffer, ReduceOp op, int n) {
  if constexpr (is_floating_v<T>) {
    if (op == ReduceOp::avg) {
      if (buffer.staged()) x = buffer.copy() / double(n);
      else x /= double(n);
      return;
    }
  }
  if (buffer.staged()) x = buffer.copy();
}

}  // namespace WEFT_BACKEND_ABI

/// Whether the elements `in` reads overlap those `out` writes (then `in` is copied first).
template <Element T>
bool overlap(const TensorBase<T>& out, const TensorBase<T>& in) {
  return weft::detail::overlaps(weft::detail::byte_range(weft::detail::tensor_ref(out)),
                                weft::detail::byte_range(weft::detail::tensor_ref(in)));
}

/// Whether a and b are one tensor: the same elements in the same order.
template <class A, class B>
bool same_elements(const A& a, const B& b) {
  return a.storage() == b.storage() && a.offset() == b.offset() && a.shape() == b.shape() && a.strides() == b.strides();
}

/// What all_gather and reduce_scatter ask of their out and in: one dtype, out writable.
template <class O, class I>
constexpr void check_out_in() {
  static_assert(std::is_same_v<element_of<O>, element_of<I>>,
                "weft::dist::all_gather and reduce_scatter: out and in need the same dtype");
  static_assert(writable_v<O>, "weft::dist::all_gather and reduce_scatter write out: pass a Tensor or a writable TensorView");
}

inline namespace WEFT_BACKEND_ABI {

/// The agreement of all_gather or reduce_scatter on one tensor: `call` carries the op's own checks
/// of the shapes in its error, joined here with those both make. One rank's gather or reduction
/// is its own `in`: out = in (nothing when they are one tensor). Returns whether the payload
/// still has to travel.
template <Element T>
bool agree_on_pair(Call call, TensorView<T> out, const TensorView<const T>& in, const Group& group) {
  call.error = join_errors({transport_error("in", in.device(), group), device_pair_error(out.device(), in.device()),
                            call.error});
  agree(group, call, [&] { return describe_on(dtype_of<T>, in.shape(), in.device()); });
  if (in.numel() == 0) return false;
  if (group.size() > 1) return true;
  if (!same_elements(out, in)) out = in;
  return false;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

// The transport (MPI or NCCL) depends on how the file is compiled: backend namespace.
inline namespace WEFT_BACKEND_ABI {

/// x = reduce(op) over the group's ranks of x, element by element, in place (x: a Tensor or a
/// writable TensorView, strided or not). Every rank passes the same dtype and shape.
template <detail::TensorArgument X>
void all_reduce(X&& x_arg, const Group& group, ReduceOp op = ReduceOp::sum) {
  using T = detail::element_of<X>;
  static_assert(detail::writable_v<X>, "weft::dist::all_reduce writes x: pass a Tensor or a writable TensorView");
  TensorView<T> x = x_arg;
  detail::Call call = detail::tensor_call<T>(detail::Collective::all_reduce, x.shape(), x.device());
  call.reduce_op = int(op);
  call.error = detail::join_errors({detail::transport_error("x", x.device(), group), detail::avg_error<T>(op)});
  detail::agree(group, call, [&] { return detail::describe_on(dtype_of<T>, x.shape(), x.device()); });
  if (x.numel() == 0 || group.size() == 1) return;  // one rank: op over {x} is x (avg: x / 1)
  detail::Staging<T> buffer(x, true);
  detail::with_transport(group, x.device(), [&](const auto& wire) {
    wire.all_reduce(buffer.data(), x.numel(), op);
    // NCCL averages by itself; over MPI avg travelled as a sum
    const bool averaged = std::remove_cvref_t<decltype(wire)>::kAverages;
    detail::finish_reduction(x, buffer, averaged ? ReduceOp::sum : op, group.size());
  });
}

/// x = group rank `root`'s x, on every rank (x: a Tensor or a writable TensorView).
template <detail::TensorArgument X>
void broadcast(X&& x_arg, int root, const Group& group) {
  using T = detail::element_of<X>;
  static_assert(detail::writable_v<X>, "weft::dist::broadcast writes x: pass a Tensor or a writable TensorView");
  TensorView<T> x = x_arg;
  detail::Call call = detail::tensor_call<T>(detail::Collective::broadcast, x.shape(), x.device());
  call.root = root;
  const bool root_ok = root >= 0 && root < group.size();
  call.error = detail::join_errors(
      {detail::transport_error("x", x.device(), group),
       root_ok ? std::string() : weft::detail::cat("root ", root, " is not a rank of the group (0 to ", group.size() - 1, ")")});
  detail::agree(group, call, [&] { return detail::describe_on(dtype_of<T>, x.shape(), x.device()); });
  if (x.numel() == 0 || group.size() == 1) return;  // one rank is the root
  const bool sends = group.rank() == root;
  detail::Staging<T> buffer(x, sends);
  detail::with_transport(group, x.device(),
                         [&](const auto& wire) { wire.broadcast(buffer.data(), x.numel(), root); });
  if (!sends && buffer.staged()) x = buffer.copy();
}

/// out = the ranks' `in` concatenated along dim 0 in group-rank order (torch's
/// all_gather_into_tensor): out.shape(0) == size * in.shape(0), the other dims equal (a 0-d in
/// gathers into [size]). `in` may be this rank's own chunk of out (gathered in place).
template <detail::TensorArgument O, detail::TensorArgument I>
void all_gather(O&& out_arg, const I& in_arg, const Group& group) {
  detail::check_out_in<O, I>();
  using T = detail::element_of<O>;
  TensorView<T> out = out_arg;
  const TensorView<const T> in = in_arg;
  const int n = group.size();
  Shape expected = in.shape();
  if (expected.rank() == 0) expected.push_back(n);
  else expected[0] *= n;
  detail::Call call = detail::tensor_call<T>(detail::Collective::all_gather, in.shape(), in.device());
  call.error = detail::join_errors(
      {out.shape() == expected ? std::string()
                               : weft::detail::cat("out has shape ", out.shape(), ", but ", n, " ranks' in ", in.shape(),
                                                   " gather into ", expected),
       detail::per_rank_count_error("in", in.numel())});
  if (!detail::agree_on_pair(call, out, in, group)) return;
  detail::Staging<T> gathered(out, false);
  const std::int64_t chunk = in.numel();
  const bool in_place = !gathered.staged() && in.is_contiguous() && in.data() == gathered.data() + group.rank() * chunk;
  const bool aliased = !in_place && !gathered.staged() && detail::overlap<T>(out, in);
  const Tensor<T> in_copy = aliased || !in.is_contiguous() ? Tensor<T>(in) : Tensor<T>();
  const T* source = in_place ? nullptr : in_copy.defined() ? in_copy.data() : in.data();
  detail::with_transport(group, in.device(),
                         [&](const auto& wire) { wire.all_gather(gathered.data(), source, chunk); });
  if (gathered.staged()) out = gathered.copy();
}

/// out = the group rank's chunk of reduce(op) over the ranks' `in`: in.shape(0) == size *
/// out.shape(0), the other dims equal; rank k gets rows [k * out.shape(0), (k+1) * out.shape(0)).
template <detail::TensorArgument O, detail::TensorArgument I>
void reduce_scatter(O&& out_arg, const I& in_arg, const Group& group, ReduceOp op = ReduceOp::sum) {
  detail::check_out_in<O, I>();
  using T = detail::element_of<O>;
  TensorView<T> out = out_arg;
  const TensorView<const T> in = in_arg;
  const int n = group.size();
  std::string shape_error;
  if (in.dim() == 0) {
    shape_error = "in is 0-d; it needs a dim 0 of size x out.shape(0) rows";
  } else if (in.shape()[0] % n != 0) {
    shape_error = weft::detail::cat("in has shape ", in.shape(), "; its dim 0 must be a multiple of the group's ", n, " ranks");
  } else {
    Shape expected = in.shape();
    expected[0] /= n;
    if (out.shape() != expected)
      shape_error = weft::detail::cat("out has shape ", out.shape(), ", but in ", in.shape(), " scatters over ", n,
                                      " ranks into ", expected);
  }
  detail::Call call = detail::tensor_call<T>(detail::Collective::reduce_scatter, in.shape(), in.device());
  call.reduce_op = int(op);
  call.error = detail::join_errors(
      {shape_error, detail::avg_error<T>(op), detail::per_rank_count_error("out", out.numel())});
  if (!detail::agree_on_pair(call, out, in, group)) return;
  detail::Staging<T> result(out, false);
  const bool copy_in = !in.is_contiguous() || (!result.staged() && detail::overlap<T>(out, in));
  const Tensor<T> in_copy = copy_in ? Tensor<T>(in) : Tensor<T>();
  detail::with_transport(group, in.device(), [&](const auto& wire) {
    wire.reduce_scatter(result.data(), copy_in ? in_copy.data() : in.data(), out.numel(), op);
    const bool averaged = std::remove_cvref_t<decltype(wire)>::kAverages;  // as in all_reduce
    detail::finish_reduction(out, result, averaged ? ReduceOp::sum : op, n);
  });
}

}  // namespace WEFT_BACKEND_ABI

/// Returns once every rank of the group has entered it (the agreement's exchange is the barrier).
inline void barrier(const Group& group) {
  detail::agree(group, detail::Call{detail::Collective::barrier}, [] { return std::string(); });
}

}  // namespace weft::dist

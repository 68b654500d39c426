// SPDX-License-Identifier: MIT
/// @file nn::cross_entropy (fused log_softmax and negative log likelihood over the last dim) and its backward.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "weft/backend/rows.hpp"
#include "weft/ops/factories.hpp"
#include "weft/ops/materialize.hpp"
#include "weft/ops/reduce.hpp"
#include "weft/plan/kernel_operands.hpp"

namespace weft::nn {

/// How the per-row losses become the result: `none` keeps one loss per row (the
/// targets' shape), `mean` averages them and `sum` adds them (0-dim results).
enum class Reduction { none, mean, sum };

}  // namespace weft::nn

namespace weft::detail {
inline namespace WEFT_BACKEND_ABI {

/// The stride between consecutive rows when a view's first `lead` dims collapse into one
/// row-major dim (dims of extent 1 are skipped; 0 when there is at most one row), else -1.
inline std::int64_t collapsed_row_stride(const Shape& shape, const Strides& strides, int lead) {
  std::int64_t stride = -1, expect = 0;
  for (int d = lead - 1; d >= 0; --d) {
    if (shape[d] == 1) continue;
    if (stride < 0) stride = expect = strides[d];
    else if (strides[d] != expect) return -1;
    expect *= shape[d];
  }
  return stride < 0 ? 0 : stride;
}

/// Rows of a [..., n] view read in place: last dim unit-stride (or n == 1) and the leading dims
/// collapsible; the row stride, or -1 when a contiguous copy is needed.
template <class T>
std::int64_t in_place_row_stride(const TensorBase<T>& t) {
  const int last = t.dim() - 1;
  if (t.shape()[last] > 1 && t.strides()[last] != 1) return -1;
  return collapsed_row_stride(t.shape(), t.strides(), last);
}

/// rows x n of a cross_entropy problem (logits [..., n], targets [...]).
struct CrossEntropyRows {
  std::int64_t rows, n;
};

/// Checks logits and targets (shapes, devices, every target in [0, n)) before anything is
/// allocated or written. The targets are read on the host (a CUDA tensor's are copied back).
template <class T, class I>
CrossEntropyRows check_cross_entropy(const char* op, const TensorView<const T>& logits,
                                     const TensorView<const I>& targets) {
  if (!logits.defined() || !targets.defined())
    fail(op, logits.defined() ? "targets are" : "logits are", " an empty (default-constructed) tensor");
  if (logits.dim() == 0)
    fail(op, "logits of shape [] have no class dim; logits need shape [..., C] with the classes last");
  const std::int64_t n = logits.shape()[logits.dim() - 1];
  if (n == 0) fail(op, "logits of shape ", logits.shape(), " have no classes (C = 0); C must be at least 1");
  const Shape lead(logits.shape().begin(), logits.shape().end() - 1);
  if (!(targets.shape() == lead))
    fail(op, "targets of shape ", targets.shape(), " do not match logits of shape ", logits.shape(),
         "; targets need the logits' leading shape ", lead, " (one class index per row)");
  if (targets.device() != logits.device())
    fail(op, "logits (shape ", logits.shape(), ") are on ", logits.device(), " but targets (shape ", targets.shape(),
         ") are on ", targets.device(), "; move them to one device with .to(device)");
  check_device_compiled(op, logits.device());
  const std::int64_t rows = lead.numel();
  auto check = [&](std::int64_t r, std::int64_t t) {
    if (t >= 0 && t < n) return;
    std::int64_t index[kMaxRank];
    unravel(r, lead.begin(), lead.rank(), index);
    fail(op, "target ", t, " at targets", Shape(index, index + lead.rank()), " (row ", r,
         ") is outside [0, ", n, "); logits of shape ", logits.shape(), " have C = ", n, " classes");
  };
  if (targets.device().is_cpu()) {
    for (std::int64_t r = 0; r < rows; ++r) check(r, std::int64_t(targets.data()[strided_offset(r, lead, targets.strides())]));
  } else {
    const std::vector<I> host = targets.to_vector();
    for (std::int64_t r = 0; r < rows; ++r) check(r, std::int64_t(host[std::size_t(r)]));
  }
  return {rows, n};
}

template <class T, class I>
Tensor<T> cross_entropy_impl(const TensorView<const T>& logits, const TensorView<const I>& targets,
                             nn::Reduction reduction) {
  const char* op = "nn::cross_entropy";
  const CrossEntropyRows p = check_cross_entropy(op, logits, targets);
  std::int64_t stride = in_place_row_stride(logits);
  const TensorView<const T> x = stride < 0 ? logits.contiguous() : logits;
  if (stride < 0) stride = p.n;
  const TensorView<const I> t = targets.contiguous();
  const Device device = logits.device();
  if (reduction == nn::Reduction::none) {
    Tensor<T> loss = empty<T>(targets.shape(), device);
    if (p.rows > 0) run_cross_entropy_rows(x.data(), stride, t.data(), p.rows, p.n, loss.data(), device);
    return loss;
  }
  // The rows' losses in the accumulator type, then one deterministic reduction (pairwise on the
  // CPU); the mean of no rows is NaN, as in PyTorch.
  using Acc = math_t<T>;
  Tensor<Acc> rows = empty<Acc>(Shape{p.rows}, device);
  if (p.rows > 0) run_cross_entropy_rows(x.data(), stride, t.data(), p.rows, p.n, rows.data(), device);
  Tensor<Acc> total = reduction == nn::Reduction::mean ? weft::mean(rows) : weft::sum(rows);
  if constexpr (std::is_same_v<Acc, T>) return total;
  else return eval(cast<T>(total));
}

/// Checks cross_entropy_backward's operands: the logits and targets, and `grad` (the loss's
/// gradient: shape [] for mean and sum, the targets' shape for none; undefined for a number).
template <class T, class I>
CrossEntropyRows check_cross_entropy_backward(const char* op, const TensorView<const T>& grad,
                                              const TensorView<const T>& logits, const TensorView<const I>& targets,
                                              nn::Reduction reduction) {
  const CrossEntropyRows p = check_cross_entropy(op, logits, targets);
  const Shape loss_shape = reduction == nn::Reduction::none ? targets.shape() : Shape{};
  if (grad.defined() && !(grad.shape() == loss_shape))
    fail(op, "grad_loss of shape ", grad.shape(), " does not match the loss's shape ", loss_shape,
         reduction == nn::Reduction::none ? " (reduction none: one gradient per row of logits of shape "
                                          : " (reduction mean or sum: one gradient for logits of shape ",
         logits.shape(), ")");
  if (grad.defined() && grad.device() != logits.device())
    fail(op, "logits (shape ", logits.shape(), ") are on ", logits.device(), " but grad_loss (shape ", grad.shape(),
         ") is on ", grad.device(), "; move them to one device with .to(device)");
  return p;
}

/// Writes cross_entropy's gradient into `out` (the logits' shape and device, checked), rows read
/// and written in place where their strides allow.
template <class T, class I>
void run_cross_entropy_backward(const CrossEntropyRows& p, const TensorView<T>& out, const TensorView<const T>& grad,
                                double g, const TensorView<const T>& logits, const TensorView<const I>& targets,
                                nn::Reduction reduction) {
  if (p.rows == 0) return;
  const Device device = logits.device();
  // A logits view that overlaps the output other than as the very same elements is read from a copy.
  const bool same_elements = logits.data() == out.data() && logits.strides() == out.strides();
  const bool aliased = overlaps(byte_range(tensor_ref(logits)), byte_range(tensor_ref(out))) && !same_elements;
  std::int64_t x_stride = aliased ? -1 : in_place_row_stride(logits);
  const TensorView<const T> x = x_stride >= 0 ? logits : TensorView<const T>(logits.clone());
  if (x_stride < 0) x_stride = p.n;
  const TensorView<const I> t = targets.contiguous();
  std::int64_t g_stride = grad.defined() && reduction == nn::Reduction::none
                               ? collapsed_row_stride(grad.shape(), grad.strides(), grad.dim())
                               : 0;
  const TensorView<const T> gv = g_stride < 0 ? grad.contiguous() : grad;
  if (g_stride < 0) g_stride = 1;
  const T* gp = gv.defined() ? gv.data() : nullptr;
  const double scale = reduction == nn::Reduction::mean ? g / double(p.rows) : g;
  const std::int64_t out_stride = in_place_row_stride(out);
  if (out_stride >= 0) {
    run_cross_entropy_backward_rows(x.data(), x_stride, t.data(), gp, g_stride, scale, p.rows, p.n, out.data(),
                                    out_stride, device);
  } else {  // rows the kernel cannot stride through: a contiguous gradient, then copied into them
    Tensor<T> dense = empty<T>(logits.shape(), device);
    run_cross_entropy_backward_rows(x.data(), x_stride, t.data(), gp, g_stride, scale, p.rows, p.n, dense.data(), p.n,
                                    device);
    TensorView<T> dst = out;
    dst = dense;
  }
}

/// The loss's gradient: a tensor (`value` 1), or a number (`value`, no tensor).
template <class T>
struct LossGradient {
  TensorView<const T> tensor;
  double value = 1;
};
template <class T, class G>
LossGradient<T> loss_gradient(const G& grad_loss) {
  if constexpr (Number<G>) {
    return {TensorView<const T>(), double(grad_loss)};
  } else {
    static_assert(std::is_same_v<typename G::value_type, T>,
                  "weft::nn::cross_entropy_backward: grad_loss needs the logits' dtype (or pass a number)");
    return {grad_loss.view(), 1.0};
  }
}

/// Whether Targets holds class indices: a tensor, view or expression of an integer dtype.
template <class Targets>
constexpr bool holds_class_indices() {
  if constexpr (SingleTensor<Targets> || Expression<Targets>) {
    using I = typename Targets::value_type;
    return std::is_integral_v<I> && !std::is_same_v<I, bool>;
  } else {
    return false;
  }
}

/// holds_class_indices, or cross_entropy's one compile-time message (callers then instantiate
/// nothing else, so that it stays the only error).
template <class Targets>
constexpr bool check_class_indices() {
  static_assert(holds_class_indices<Targets>(),
                "weft::nn::cross_entropy: targets need integer class indices (an int64 or int32 tensor, or an integer "
                "expression); convert other dtypes with weft::cast<std::int64_t>(targets)");
  return holds_class_indices<Targets>();
}

/// The targets as the kernels read them: an int64 or int32 tensor in place, an expression of
/// those dtypes evaluated, other integer dtypes converted to int64.
template <class Targets>
auto class_indices(const Targets& targets) {
  using I = typename Targets::value_type;
  if constexpr (std::is_same_v<I, std::int64_t> || std::is_same_v<I, std::int32_t>) return materialize(targets);
  else return materialize(cast<std::int64_t>(targets));
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail

namespace weft::nn {
inline namespace WEFT_BACKEND_ABI {

/// cross_entropy(logits, targets): loss_i = logsumexp(logits_i) - logits_i[targets_i] over the
/// rows of logits [..., C] (classes last; targets int64 or int32 of shape [...], each in [0, C)),
/// then `reduction`: mean (default) or sum (0-dim results) or none (shape [...]). One fused pass
/// per row (max, then sum of exp from cache); 16-bit floats accumulate in float. A view whose last
/// dim is contiguous (e.g. logits.narrow(-1, 0, V) of padded rows) is read in place. A target
/// outside [0, C) is a weft::Error naming it, its row and C, raised before anything is allocated.
/// Targets may also be an integer expression (`labels - 1`), evaluated first; any other type of
/// targets is one compile-time error.
template <Operand X, class Targets>
  requires HasTensorOperand<X>
Tensor<weft::detail::operand_dtype_t<X>> cross_entropy(const X& logits, const Targets& targets,
                                                 Reduction reduction = Reduction::mean) {
  using T = weft::detail::operand_dtype_t<X>;
  static_assert(is_floating_v<T>, "weft::nn::cross_entropy needs floating-point logits; cast<float>(logits) first");
  if constexpr (weft::detail::check_class_indices<Targets>()) {
    const auto t = weft::detail::class_indices(targets);
    return weft::detail::cross_entropy_impl<T>(weft::detail::materialize(logits), t, reduction);
  } else {
    return {};
  }
}

/// Writes d loss / d logits into grad_logits (the logits' shape; its rows may be strided, e.g. the
/// first V columns of a padded [N, Vp] gradient): dlogits_ij = g_i * (softmax(logits_i)_j -
/// [j == targets_i]), with g_i = grad_loss / N for mean (N rows), grad_loss for sum and
/// grad_loss_i for none. grad_loss is a tensor of the loss's shape and the logits' dtype, or a
/// number (mean and sum). grad_logits may be the logits themselves (the gradient replaces them).
template <class T, class G, Operand X, Operand Targets>
  requires(SingleTensor<G> || Number<G>) && HasTensorOperand<X>
void cross_entropy_backward(TensorView<T> grad_logits, const G& grad_loss, const X& logits, const Targets& targets,
                            Reduction reduction = Reduction::mean) {
  static_assert(std::is_same_v<weft::detail::operand_dtype_t<X>, T>,
                "weft::nn::cross_entropy_backward: grad_logits needs the logits' dtype");
  static_assert(is_floating_v<T>, "weft::nn::cross_entropy_backward needs floating-point logits");
  if constexpr (weft::detail::check_class_indices<Targets>()) {
    const char* op = "nn::cross_entropy_backward";
    const TensorView<const T> x = weft::detail::materialize(logits);
    const weft::detail::LossGradient<T> g = weft::detail::loss_gradient<T>(grad_loss);
    if (!grad_logits.defined()) weft::detail::fail(op, "grad_logits is an empty (default-constructed) tensor");
    const auto t = weft::detail::class_indices(targets);
    const weft::detail::CrossEntropyRows p = weft::detail::check_cross_entropy_backward(op, g.tensor, x, t, reduction);
    if (!(grad_logits.shape() == x.shape()) || grad_logits.device() != x.device())
      weft::detail::fail(op, "grad_logits of shape ", grad_logits.shape(), " on ", grad_logits.device(),
                   " does not match logits of shape ", x.shape(), " on ", x.device(),
                   "; the gradient has the logits' shape and device");
    for (int d = 0; d < grad_logits.dim(); ++d)
      if (grad_logits.shape()[d] > 1 && grad_logits.strides()[d] == 0)
        weft::detail::fail(op, "grad_logits of shape ", grad_logits.shape(), " is an expanded view (stride 0 in dim ", d,
                     "): its elements alias each other; write into a tensor of its own");
    weft::detail::run_cross_entropy_backward(p, grad_logits, g.tensor, g.value, x, t, reduction);
  }
}
template <class T, class G, Operand X, Operand Targets>
  requires(SingleTensor<G> || Number<G>) && HasTensorOperand<X>
void cross_entropy_backward(Tensor<T>& grad_logits, const G& grad_loss, const X& logits, const Targets& targets,
                            Reduction reduction = Reduction::mean) {
  cross_entropy_backward(grad_logits.view(), grad_loss, logits, targets, reduction);
}

/// d loss / d logits as a new contiguous tensor of the logits' shape (see the overload above).
template <class G, Operand X, Operand Targets>
  requires(SingleTensor<G> || Number<G>) && HasTensorOperand<X>
Tensor<weft::detail::operand_dtype_t<X>> cross_entropy_backward(const G& grad_loss, const X& logits, const Targets& targets,
                                                          Reduction reduction = Reduction::mean) {
  using T = weft::detail::operand_dtype_t<X>;
  static_assert(is_floating_v<T>, "weft::nn::cross_entropy_backward needs floating-point logits");
  if constexpr (weft::detail::check_class_indices<Targets>()) {
    const TensorView<const T> x = weft::detail::materialize(logits);
    const weft::detail::LossGradient<T> g = weft::detail::loss_gradient<T>(grad_loss);
    const auto t = weft::detail::class_indices(targets);
    const weft::detail::CrossEntropyRows p =
        weft::detail::check_cross_entropy_backward("nn::cross_entropy_backward", g.tensor, x, t, reduction);
    Tensor<T> out = empty<T>(x.shape(), x.device());
    weft::detail::run_cross_entropy_backward(p, out.view(), g.tensor, g.value, x, t, reduction);
    return out;
  } else {
    return {};
  }
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn

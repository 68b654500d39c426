// SPDX-License-Identifier: MIT
/// @file logsumexp, var, std and var_mean over all dims or a list of dims: two passes of the reduction executor each (the max or the mean first), the input read in place.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "weft/ops/reduce.hpp"

namespace weft {
namespace detail {
inline namespace WEFT_BACKEND_ABI {

/// logsumexp in math_t: m = max (keepdim), s = sum exp(x - shift) with shift = m, or 0 where m is
/// +-inf, then shift + log s.
template <class E>
Tensor<to_floating_t<typename E::value_type>> reduce_logsumexp(const E& e, const std::vector<std::int64_t>* dims,
                                                               bool keepdim) {
  using V = typename E::value_type;
  constexpr const char* op = "logsumexp";
  if constexpr (!is_floating_v<V>) {
    fail_not_floating(op, e, dims);
  } else {
    using Acc = math_t<V>;
    const auto x = cast<Acc>(e);
    // The max of nothing is -inf (the reducer's identity): shift 0, log 0 = -inf, as PyTorch.
    const Tensor<Acc> m = run_reduction<Acc>(op, prepare_reduce(op, x, dims, true, false), ExtremumReducer<Acc, true>{});
    const auto shift = where(isinf(m), 0.0, m);
    const Tensor<Acc> s = run_reduction<Acc>(op, prepare_reduce(op, exp(x - shift), dims, keepdim, false),
                                             SumReducer<Acc>{});
    const TensorView<const Acc> m_out = m.view().view(s.shape());  // the same values, in the output's shape
    return eval(cast<V>(where(isinf(m_out), 0.0, m_out) + log(s)));
  }
}

/// var's two passes (std's with kStd) over x in math_t: the mean m (keepdim), then sum (x - m)^2 /
/// max(0, n - correction), handed to write(input, reducer) to run; returns m. `single_thread`:
/// on the calling thread only (a row block).
template <bool kStd, class X, class Write>
Tensor<typename X::value_type> variance_passes(const char* op, const X& x, const std::vector<std::int64_t>* dims,
                                               double correction, bool single_thread, const Write& write) {
  using Acc = typename X::value_type;
  const auto mean_input = prepare_reduce(op, x, dims, true, false);
  Tensor<Acc> mean;
  if (single_thread) {
    mean = empty<Acc>(mean_input.setup.out_shape, Device::cpu());
    if (mean.numel() != 0) run_reduction_into(mean_input, SumReducer<Acc, true>{}, mean.data(), true);
  } else {
    mean = run_reduction<Acc>(op, mean_input, SumReducer<Acc, true>{});
  }
  VarianceReducer<Acc, kStd> red;
  red.divisor = Acc(std::max(0.0, double(mean_input.setup.plan.n_red) - correction));
  write(x - mean, red);
  return mean;
}

/// var (std with kStd) in math_t (variance_passes), rounded to the dtype. `mean_out`, when given,
/// receives the mean in V, in the output's shape (var_mean).
template <bool kStd, class E>
Tensor<to_floating_t<typename E::value_type>> reduce_variance(const char* op, const E& e,
                                                              const std::vector<std::int64_t>* dims,
                                                              double correction, bool keepdim,
                                                              Tensor<to_floating_t<typename E::value_type>>* mean_out) {
  using V = typename E::value_type;
  if constexpr (!is_floating_v<V>) {
    fail_not_floating(op, e, dims);
  } else {
    Tensor<V> out;
    const auto mean = variance_passes<kStd>(op, cast<math_t<V>>(e), dims, correction, false,
                                            [&](const auto& deviations, const auto& red) {
                                              out = run_reduction<V>(op, prepare_reduce(op, deviations, dims, keepdim, false), red);
                                            });
    if (mean_out) *mean_out = eval(cast<V>(mean.view().view(out.shape())));
    return out;
  }
}

/// var and std (kStd) as weft::Reduced kinds.
template <bool kStd>
struct VarianceKind : ReductionKind {
  double correction = 1;
  template <class V>
  using result_t = to_floating_t<V>;
  bool operator==(const VarianceKind&) const = default;
  template <class E>
  auto evaluate(const E& x, const std::vector<std::int64_t>& dims, bool keepdim) const {
    return reduce_variance<kStd>(op, x, &dims, correction, keepdim, nullptr);
  }
  template <class O, class E>
  void reduce_rows(const E& block, int dim, O* out) const {
    const std::vector<std::int64_t> dims{dim};
    variance_passes<kStd>(op, cast<math_t<typename E::value_type>>(block), &dims, correction, true,
                          [&](const auto& deviations, const auto& red) { reduce_block(deviations, dim, red, out); });
  }
  /// The row path's first pass as a reduction node of its own, `mean(x, dim, true)`, so that a
  /// row epilogue computes it once with an equal mean of the statement (the layer-norm formula
  /// reads both): for float and double, whose mean in math_t is mean's own value (16-bit floats
  /// keep var's mean in float, unrounded: row_reduction computes it).
  template <class E>
    requires std::is_same_v<math_t<typename E::value_type>, typename E::value_type>
  Reduced<MeanKind, E> row_mean(const E& x, const std::vector<std::int64_t>& dims) const {
    return {{}, {{"mean", false, true}}, x, dims, true};
  }
  /// One row at a time (SingleReducerKind::row_reduction), as variance_passes: the row's mean
  /// (`mean`: row_mean's value for the row, where there is one; else computed here, into a value
  /// of the thread's own), then the squared deviations from it.
  template <class O, class E, class Rows>
  auto row_reduction(const E& input, Rows& rows, const void* mean) const {
    using V = typename E::value_type;
    using Acc = math_t<V>;
    const auto x = cast<Acc>(input);
    VarianceReducer<Acc, kStd> red;
    red.divisor = Acc(std::max(0.0, double(rows.row_length()) - correction));
    if constexpr (std::is_same_v<Acc, V>) {
      auto deviation_fold = rows.fold(red, x - RowValue<Acc>{{}, static_cast<const Acc*>(mean)});
      return [deviation_fold](const std::int64_t* row) mutable { return O(deviation_fold(row)); };
    } else {
      Acc* own_mean = rows.template new_value<Acc>();
      auto mean_fold = rows.fold(SumReducer<Acc, true>{}, x);
      auto deviation_fold = rows.fold(red, x - RowValue<Acc>{{}, own_mean});
      return [mean_fold, deviation_fold, own_mean](const std::int64_t* row) mutable {
        *own_mean = mean_fold(row);
        return O(deviation_fold(row));
      };
    }
  }
};

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// logsumexp(x) = m + log(sum exp(x - m)) over `dim` (one dim or a list; an empty list: every
/// dim), m the max over them, so no exp overflows (torch.logsumexp). Where m is +-inf the shift
/// is 0 instead: all -inf gives -inf (also of no elements), any +inf gives +inf, a NaN gives NaN.
/// Floating inputs only (an integer one is a weft::Error: cast first; PyTorch would promote it
/// to float); 16-bit floats compute in float. Two passes over the input (an expression is
/// evaluated in each).
template <Operand X>
  requires HasTensorOperand<X>
Tensor<to_floating_t<detail::operand_dtype_t<X>>> logsumexp(const X& x, const DimList& dim, bool keepdim = false) {
  return detail::reduce_logsumexp(detail::as_expr(x), &dim.dims(), keepdim);
}

/// var(x) = sum (x_i - mean)^2 / max(0, n - correction) over every element (torch.var;
/// correction 1: the unbiased sample variance, 0: the population variance). Two passes (the mean,
/// then the squared deviations), accurate where E[x^2] - mean^2 would cancel. n <= correction
/// gives inf, or NaN when the deviations are all 0 (n = 1, or no elements), as PyTorch.
/// Floating inputs only (weft::Error otherwise); 16-bit floats compute in float.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<to_floating_t<detail::operand_dtype_t<X>>> var(const X& x) {
  return detail::reduce_variance<false>("var", detail::as_expr(x), nullptr, 1.0, false, nullptr);
}
/// var over `dim` (one dim or a list); keepdim leaves the reduced dims as size 1.
template <Operand X>
  requires HasTensorOperand<X>
Reduced<detail::VarianceKind<false>, detail::expr_t<X>> var(const X& x, const DimList& dim, double correction = 1,
                                                             bool keepdim = false) {
  return Reduced<detail::VarianceKind<false>, detail::expr_t<X>>{{}, {{"var", false, true}, correction}, detail::as_expr(x),
                                                               dim.dims(), keepdim}
      .checked();
}

/// std(x) = sqrt(var(x)) (torch.std), with var's correction, passes and errors.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<to_floating_t<detail::operand_dtype_t<X>>> std(const X& x) {
  return detail::reduce_variance<true>("std", detail::as_expr(x), nullptr, 1.0, false, nullptr);
}
template <Operand X>
  requires HasTensorOperand<X>
Reduced<detail::VarianceKind<true>, detail::expr_t<X>> std(const X& x, const DimList& dim, double correction = 1,
                                                            bool keepdim = false) {
  return Reduced<detail::VarianceKind<true>, detail::expr_t<X>>{{}, {{"std", false, true}, correction}, detail::as_expr(x),
                                                               dim.dims(), keepdim}
      .checked();
}

/// (var, mean) over `dim` in one call (torch.var_mean): the mean var computes anyway, rounded to
/// the dtype. `auto [v, m] = weft::var_mean(x, 1);`
template <Operand X>
  requires HasTensorOperand<X>
std::pair<Tensor<to_floating_t<detail::operand_dtype_t<X>>>, Tensor<to_floating_t<detail::operand_dtype_t<X>>>>
var_mean(const X& x, const DimList& dim, double correction = 1, bool keepdim = false) {
  Tensor<to_floating_t<detail::operand_dtype_t<X>>> mean;
  auto v = detail::reduce_variance<false>("var_mean", detail::as_expr(x), &dim.dims(), correction, keepdim, &mean);
  return {std::move(v), std::move(mean)};
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft

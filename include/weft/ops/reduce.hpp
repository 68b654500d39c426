// SPDX-License-Identifier: MIT
/// @file Reductions sum, mean, prod, max, min, amax, amin, norm over all dims or a list of dims; the input may be any expression, read once.
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/backend/reduce.hpp"
#include "weft/ops/factories.hpp"
#include "weft/ops/fuse.hpp"
#include "weft/ops/materialize.hpp"
#include "weft/ops/reduction_node.hpp"
#include "weft/plan/reduction.hpp"
#include "weft/expr/operators.hpp"
#include "weft/expr/reducers.hpp"
#include "weft/expr/tree.hpp"

namespace weft {

/// The dims a reduction runs over: one dim (`1`), or a list (`{0, 2}`, a
/// std::vector). Negative dims count from the end; an empty list means every
/// dim (as in PyTorch).
class DimList {
 public:
  DimList(std::int64_t dim) : dims_{dim} {}
  DimList(std::initializer_list<std::int64_t> dims) : dims_(dims) {}
  DimList(std::vector<std::int64_t> dims) : dims_(std::move(dims)) {}
  const std::vector<std::int64_t>& dims() const { return dims_; }

 private:
  std::vector<std::int64_t> dims_;
};

namespace detail {


/// sum's result dtype: floats keep theirs; bool and integers sum to int64 (PyTorch).
template <class V>
using sum_dtype_t = std::conditional_t<is_floating_v<V>, V, std::int64_t>;

/// The expression and its reduction's setup.
template <class E>
struct ReduceInput {
  E expr;
  ReduceSetup setup;
};

// From here on the functions may evaluate dense nodes (stage_dense runs the backend): in its
// ABI namespace (docs/architecture.md, "ODR safety").
inline namespace WEFT_BACKEND_ABI {

/// Reads the operands of `e` and plans its reduction (reduction_setup). Dense nodes in `e` (a matmul,
/// another reduction) are evaluated first (expr/dense.hpp: stage_dense).
template <class E>
auto prepare_reduce(const char* op, const E& e, const std::vector<std::int64_t>* dims, bool keepdim, bool nonempty) {
  using Staged = decltype(stage_dense(e));
  ReduceInput<Staged> input{stage_dense(e), {}};
  std::vector<ReduceLeaf> leaves;
  for_each_leaf(input.expr, [&](auto& leaf) {
    leaves.push_back({leaf.tensor.defined(), leaf.tensor.device(), &leaf.tensor.shape(), &leaf.tensor.strides()});
  });
  input.setup = reduction_setup(op, leaves, dims, keepdim, nonempty);
  return input;
}

/// The error of a reduction that needs a floating dtype (mean, norm, logsumexp, var, ...) given
/// another: `e`'s dims are checked first, so that a bad dim is reported as such.
template <class E>
[[noreturn]] void fail_not_floating(const char* op, const E& e, const std::vector<std::int64_t>* dims) {
  const auto in = prepare_reduce(op, e, dims, false, false);
  fail(op, "needs a floating-point input, got ", dtype_name<typename E::value_type>(), " of shape ", in.setup.full,
       "; cast it first, e.g. weft::", op, "(weft::cast<float>(x))");
}

/// Runs `red` over the planned reduction on the input's device into `out` (contiguous, of the
/// output's shape, non-empty). `single_thread`: on the calling thread only (a row block of a row
/// epilogue, backend/row_epilogue.hpp, which runs blocks in parallel).
template <class O, class Red, class E>
void run_reduction_into(const ReduceInput<E>& input, const Red& red, O* out, bool single_thread) {
  const ReduceSetup& in = input.setup;
  if (in.plan.n_red == 0) {  // an empty sum is 0, an empty mean NaN (0 / 0)
    const O value = O(red.finalize(red.identity(), 0));
    fill_bytes(out, in.device, &value, sizeof(O), std::size_t(in.plan.n_out));
    return;
  }
  run_reduce<O>(red, input.expr, in.plan, in.strides, out, in.device, single_thread);
}

/// Allocates the output and runs `red` over the planned reduction on the input's device.
template <class O, class Red, class E>
Tensor<O> run_reduction(const char* op, const ReduceInput<E>& input, const Red& red) {
  const ReduceSetup& in = input.setup;
  check_device_compiled(op, in.device);
  Tensor<O> out = empty<O>(in.out_shape, in.device);
  if (out.numel() != 0) run_reduction_into(input, red, out.data(), false);
  return out;
}

/// The sum (`op` names the public op in errors: sum, or any / all counting their deciding elements).
template <class E>
Tensor<sum_dtype_t<typename E::value_type>> reduce_sum(const E& e, const std::vector<std::int64_t>* dims, bool keepdim,
                                                       const char* op = "sum") {
  using V = typename E::value_type;
  return run_reduction<sum_dtype_t<V>>(op, prepare_reduce(op, e, dims, keepdim, false), SumReducer<sum_acc_t<V>>{});
}

/// The product: the sum's dtypes (bool and integers give int64, wrapping on overflow).
template <class E>
Tensor<sum_dtype_t<typename E::value_type>> reduce_prod(const E& e, const std::vector<std::int64_t>* dims,
                                                        bool keepdim) {
  using V = typename E::value_type;
  return run_reduction<sum_dtype_t<V>>("prod", prepare_reduce("prod", e, dims, keepdim, false),
                                       ProdReducer<sum_acc_t<V>>{});
}

template <class E>
Tensor<to_floating_t<typename E::value_type>> reduce_mean(const E& e, const std::vector<std::int64_t>* dims,
                                                          bool keepdim) {
  using V = typename E::value_type;
  if constexpr (!is_floating_v<V>) {
    fail_not_floating("mean", e, dims);
  } else {
    return run_reduction<V>("mean", prepare_reduce("mean", e, dims, keepdim, false), SumReducer<math_t<V>, true>{});
  }
}

template <bool kMax, class E>
Tensor<typename E::value_type> reduce_extremum(const char* op, const E& e, const std::vector<std::int64_t>* dims,
                                               bool keepdim) {
  using V = typename E::value_type;
  return run_reduction<V>(op, prepare_reduce(op, e, dims, keepdim, true), ExtremumReducer<order_t<V>, kMax>{});
}

template <class E>
Tensor<to_floating_t<typename E::value_type>> reduce_norm(const E& e, double p, const std::vector<std::int64_t>* dims,
                                                          bool keepdim) {
  using V = typename E::value_type;
  if constexpr (!is_floating_v<V>) {
    fail_not_floating("norm", e, dims);
  } else {
    using Acc = math_t<V>;
    NormReducer<Acc> red;
    red.kind = std::isinf(p) ? (p > 0 ? NormKind::linf : NormKind::lneginf)
               : p == 1      ? NormKind::l1
               : p == 2      ? NormKind::l2
               : p == 0      ? NormKind::l0
                             : NormKind::lp;
    red.p = Acc(p);
    // max / min of |x| have no identity: an empty range is an error
    return run_reduction<V>("norm", prepare_reduce("norm", e, dims, keepdim, std::isinf(p)), red);
  }
}

/// What the reduction kinds of weft::Reduced share (ops/reduction_node.hpp): the op's name,
/// whether an empty range is an error (max, min: no identity), the output's shape, where a row
/// epilogue can run, and a block of rows reduced on the calling thread.
struct ReductionKind {
  const char* op;
  bool nonempty = false;
  bool floating = false;  // the op needs a floating input (mean, var, std)
  bool operator==(const ReductionKind&) const = default;

  /// The checks of the eager reduction (input, dims, dtype), before anything runs.
  template <class E>
  void check(const E& x, const std::vector<std::int64_t>& dims) const {
    if (floating && !is_floating_v<typename E::value_type>) fail_not_floating(op, x, &dims);
    (void)prepare_reduce(op, x, &dims, false, nonempty);
  }

  template <class E>
  Shape out_shape(const E& x, const std::vector<std::int64_t>& dims, bool keepdim) const {
    return prepare_reduce(op, x, &dims, keepdim, nonempty).setup.out_shape;
  }
  /// The input's shape and the wrapped dim: a floating input on the CPU, of 1+ dims.
  template <class E>
  std::optional<RowReduction> rows(const E& x, std::int64_t dim) const {
    if constexpr (!is_floating_v<typename E::value_type>) {
      return std::nullopt;
    } else {
      const std::vector<std::int64_t> dims{dim};
      const ReduceSetup setup = prepare_reduce(op, x, &dims, true, nonempty).setup;
      if (!setup.device.is_cpu() || setup.full.rank() == 0) return std::nullopt;
      return RowReduction{setup.full, wrap_dim_of(op, dim, setup.full)};
    }
  }
  /// `red` over `dim` of block, into out (one value per row), on the calling thread.
  template <class O, class E, class Red>
  void reduce_block(const E& block, int dim, const Red& red, O* out) const {
    const std::vector<std::int64_t> dims{dim};
    run_reduction_into(prepare_reduce(op, block, &dims, true, nonempty), red, out, true);
  }
};

/// A kind whose reduction is one reducer, Derived::reducer_t<V> for an input of dtype V (sum,
/// mean, max, min): it reduces row blocks and writes into an existing output with it.
template <class Derived>
struct SingleReducerKind : ReductionKind {
  template <class O, class E>
  void reduce_rows(const E& block, int dim, O* out) const {
    reduce_block(block, dim, typename Derived::template reducer_t<typename E::value_type>{}, out);
  }
  /// The reduction of one row at a time of `input` (its reductions read as RowValue nodes), as a
  /// callable from the row's kept coordinates to its value (as O); `rows` builds the folds
  /// (backend/row_epilogue.hpp: RowFolds).
  template <class O, class E, class Rows>
  auto row_reduction(const E& input, Rows& rows, const void*) const {
    auto fold = rows.fold(typename Derived::template reducer_t<typename E::value_type>{}, input);
    return [fold](const std::int64_t* row) mutable { return O(fold(row)); };
  }
  /// The reduction written straight into `out` (contiguous, of the output's shape): false,
  /// with nothing written, where out is on another device or overlaps the input's tensors (the
  /// caller copies a new tensor in), or the input holds dense nodes.
  template <class O, class E>
  bool evaluate_into(const E& x, const std::vector<std::int64_t>& dims, bool keepdim, const TensorView<O>& out) const {
    if constexpr (dense_nodes_v<E> != 0 || !Derived::template accepts_v<typename E::value_type>) {
      return false;
    } else {
      const auto input = prepare_reduce(op, x, &dims, keepdim, nonempty);
      bool ok = input.setup.device == out.device() && device_compiled(out.device());
      const ByteRange range = byte_range(tensor_ref(out));
      for_each_leaf(input.expr, [&](const auto& leaf) { ok = ok && !overlaps(byte_range(tensor_ref(leaf.tensor)), range); });
      if (ok && out.numel() != 0)
        run_reduction_into(input, typename Derived::template reducer_t<typename E::value_type>{}, out.data(), false);
      return ok;
    }
  }
};

struct SumKind : SingleReducerKind<SumKind> {
  template <class V>
  using result_t = sum_dtype_t<V>;
  template <class V>
  using reducer_t = SumReducer<sum_acc_t<V>>;
  template <class V>
  static constexpr bool accepts_v = true;
  bool operator==(const SumKind&) const = default;
  template <class E>
  auto evaluate(const E& x, const std::vector<std::int64_t>& dims, bool keepdim) const {
    return reduce_sum(x, &dims, keepdim, op);
  }
};

struct MeanKind : SingleReducerKind<MeanKind> {
  template <class V>
  using result_t = to_floating_t<V>;
  template <class V>
  using reducer_t = SumReducer<math_t<V>, true>;
  template <class V>
  static constexpr bool accepts_v = is_floating_v<V>;  // else evaluate's error
  bool operator==(const MeanKind&) const = default;
  template <class E>
  auto evaluate(const E& x, const std::vector<std::int64_t>& dims, bool keepdim) const {
    return reduce_mean(x, &dims, keepdim);
  }
};

/// max and amax (kMax), min and amin.
template <bool kMax>
struct ExtremumKind : SingleReducerKind<ExtremumKind<kMax>> {
  template <class V>
  using result_t = V;
  template <class V>
  using reducer_t = ExtremumReducer<order_t<V>, kMax>;
  template <class V>
  static constexpr bool accepts_v = true;
  bool operator==(const ExtremumKind&) const = default;
  template <class E>
  auto evaluate(const E& x, const std::vector<std::int64_t>& dims, bool keepdim) const {
    return reduce_extremum<kMax>(this->op, x, &dims, keepdim);
  }
};

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

// The public functions live in the same ABI namespace as the backends they
// reach: a translation unit compiled by nvcc and one compiled by the host
// compiler then instantiate different functions, never two bodies of one.
inline namespace WEFT_BACKEND_ABI {

/// sum of all elements (a rank-0 tensor). bool and integer inputs sum to
/// int64; floats keep their dtype (16-bit floats accumulate in float).
template <Operand X>
  requires HasTensorOperand<X>
Tensor<detail::sum_dtype_t<detail::operand_dtype_t<X>>> sum(const X& x) {
  return detail::reduce_sum(detail::as_expr(x), nullptr, false);
}
/// sum over `dim` (one dim or a list); keepdim leaves the reduced dims as size 1. Over dims, sum,
/// mean, max, min, amax and amin (and var, std) return a weft::Reduced node, checked here and run
/// where it is assigned or evaluated: with keepdim, inside a statement of x's shape, as a row
/// epilogue (backend/row_epilogue.hpp); weft::eval(sum(x, 1)) where a tensor is needed.
template <Operand X>
  requires HasTensorOperand<X>
Reduced<detail::SumKind, detail::expr_t<X>> sum(const X& x, const DimList& dim, bool keepdim = false) {
  return Reduced<detail::SumKind, detail::expr_t<X>>{{}, {{"sum"}}, detail::as_expr(x), dim.dims(), keepdim}.checked();
}

/// mean = sum / count; needs a floating input (weft::Error otherwise). The mean of nothing is NaN.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<to_floating_t<detail::operand_dtype_t<X>>> mean(const X& x) {
  return detail::reduce_mean(detail::as_expr(x), nullptr, false);
}
template <Operand X>
  requires HasTensorOperand<X>
Reduced<detail::MeanKind, detail::expr_t<X>> mean(const X& x, const DimList& dim, bool keepdim = false) {
  return Reduced<detail::MeanKind, detail::expr_t<X>>{{}, {{"mean", false, true}}, detail::as_expr(x), dim.dims(),
                                                      keepdim}
      .checked();
}

/// prod = x_0 * x_1 * ... of all elements (a rank-0 tensor); 1 of nothing. bool and integer
/// inputs multiply in int64 (wrapping modulo 2^64 on overflow, as PyTorch); floats keep their
/// dtype (16-bit floats accumulate in float).
template <Operand X>
  requires HasTensorOperand<X>
Tensor<detail::sum_dtype_t<detail::operand_dtype_t<X>>> prod(const X& x) {
  return detail::reduce_prod(detail::as_expr(x), nullptr, false);
}
/// The product over `dim` (one dim or a list); keepdim leaves the reduced dims as size 1.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<detail::sum_dtype_t<detail::operand_dtype_t<X>>> prod(const X& x, const DimList& dim, bool keepdim = false) {
  return detail::reduce_prod(detail::as_expr(x), &dim.dims(), keepdim);
}

/// The largest element; NaN when any element is NaN. Reducing an empty range is a weft::Error.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<detail::operand_dtype_t<X>> max(const X& x) {
  return detail::reduce_extremum<true>("max", detail::as_expr(x), nullptr, false);
}
/// The largest element over `dim`. Unlike torch.max(x, dim), which returns
/// (values, indices), weft::max returns the values only (it equals amax).
template <Operand X>
  requires HasTensorOperand<X>
Reduced<detail::ExtremumKind<true>, detail::expr_t<X>> max(const X& x, const DimList& dim, bool keepdim = false) {
  return Reduced<detail::ExtremumKind<true>, detail::expr_t<X>>{{}, {{"max", true}}, detail::as_expr(x), dim.dims(), keepdim}
      .checked();
}
/// The smallest element; NaN when any element is NaN. Reducing an empty range is a weft::Error.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<detail::operand_dtype_t<X>> min(const X& x) {
  return detail::reduce_extremum<false>("min", detail::as_expr(x), nullptr, false);
}
/// The smallest element over `dim`. Unlike torch.min(x, dim), which returns
/// (values, indices), weft::min returns the values only (it equals amin).
template <Operand X>
  requires HasTensorOperand<X>
Reduced<detail::ExtremumKind<false>, detail::expr_t<X>> min(const X& x, const DimList& dim, bool keepdim = false) {
  return Reduced<detail::ExtremumKind<false>, detail::expr_t<X>>{{}, {{"min", true}}, detail::as_expr(x), dim.dims(), keepdim}
      .checked();
}

/// amax: the largest element (over `dim`); NaN propagates.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<detail::operand_dtype_t<X>> amax(const X& x) {
  return detail::reduce_extremum<true>("amax", detail::as_expr(x), nullptr, false);
}
template <Operand X>
  requires HasTensorOperand<X>
Reduced<detail::ExtremumKind<true>, detail::expr_t<X>> amax(const X& x, const DimList& dim, bool keepdim = false) {
  return Reduced<detail::ExtremumKind<true>, detail::expr_t<X>>{{}, {{"amax", true}}, detail::as_expr(x), dim.dims(), keepdim}
      .checked();
}
/// amin: the smallest element (over `dim`); NaN propagates.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<detail::operand_dtype_t<X>> amin(const X& x) {
  return detail::reduce_extremum<false>("amin", detail::as_expr(x), nullptr, false);
}
template <Operand X>
  requires HasTensorOperand<X>
Reduced<detail::ExtremumKind<false>, detail::expr_t<X>> amin(const X& x, const DimList& dim, bool keepdim = false) {
  return Reduced<detail::ExtremumKind<false>, detail::expr_t<X>>{{}, {{"amin", true}}, detail::as_expr(x), dim.dims(), keepdim}
      .checked();
}

/// The vector p-norm of all elements (torch.linalg.vector_norm): p = 2:
/// sqrt(sum x^2); 1: sum |x|; inf: max |x|; -inf: min |x|; 0: count of
/// nonzeros; else (sum |x|^p)^(1/p). Needs a floating input. No rescaling
/// against overflow (like PyTorch): sum x^2 overflows for |x| above ~1e19 in float.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<to_floating_t<detail::operand_dtype_t<X>>> norm(const X& x, double p = 2) {
  return detail::reduce_norm(detail::as_expr(x), p, nullptr, false);
}
/// The vector p-norm over `dim`.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<to_floating_t<detail::operand_dtype_t<X>>> norm(const X& x, double p, const DimList& dim, bool keepdim = false) {
  return detail::reduce_norm(detail::as_expr(x), p, &dim.dims(), keepdim);
}

// any and all count the elements that decide them: all(x) = (sum of (x == 0)) == 0 and any(x) =
// (sum of (x != 0)) > 0, one reduction each (the test fused into it) and a pass over its result.
// Of nothing, all is true and any false (torch.all / torch.any).

/// Whether every element is nonzero (NaN counts as nonzero), as a 0-dim bool tensor.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<bool> all(const X& x) {
  return eval(detail::reduce_sum(detail::as_expr(logical_not(x)), nullptr, false, "all") == 0);
}
/// Whether every element along `dim` is nonzero.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<bool> all(const X& x, const DimList& dim, bool keepdim = false) {
  return eval(detail::reduce_sum(detail::as_expr(logical_not(x)), &dim.dims(), keepdim, "all") == 0);
}
/// Whether any element is nonzero, as a 0-dim bool tensor.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<bool> any(const X& x) {
  return eval(detail::reduce_sum(detail::as_expr(x != 0), nullptr, false, "any") > 0);
}
/// Whether any element along `dim` is nonzero.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<bool> any(const X& x, const DimList& dim, bool keepdim = false) {
  return eval(detail::reduce_sum(detail::as_expr(x != 0), &dim.dims(), keepdim, "any") > 0);
}

/// Whether a and b (broadcast together) are close everywhere: all(isclose(a, b, rtol, atol,
/// equal_nan)) (torch.allclose).
template <Operand A, Operand B>
  requires HasTensorOperand<A, B>
bool allclose(const A& a, const B& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false) {
  return all(isclose(a, b, rtol, atol, equal_nan)).item();
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft

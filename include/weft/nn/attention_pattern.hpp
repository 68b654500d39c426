// SPDX-License-Identifier: MIT
/// @file Attention recognized from its formula: matmul(softmax(matmul(q, k^T) * scale [+ mask], -1), v) runs as nn::sdpa_forward (O(L E) memory); any other product of a softmax runs as written, and the `sdpa` log says which part did not match.
///
/// weft::softmax of an expression that holds a matmul is a lazy node (ops/softmax.hpp), so the
/// product of such a softmax with v reaches the matmul below with the whole formula in its type.
/// The scores' form is matched at compile time (the node types), the rest when it runs (the dim,
/// the shapes, the devices, the where's fill); a miss evaluates the formula op by op, as
/// written. docs/attention.md, "Attention from its formula".
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "weft/ops/matmul.hpp"
#include "weft/ops/softmax.hpp"
#include "weft/log/log.hpp"
#include "weft/nn/sdpa.hpp"

namespace weft::nn {
namespace detail {

using weft::detail::get;
using weft::detail::is_instance_v;

template <class N>
struct BinaryMap {
  static constexpr bool value = false;
};
template <class Op, class L, class R>
struct BinaryMap<Map<Op, L, R>> {
  static constexpr bool value = true;
  using op = Op;
  using lhs = L;
  using rhs = R;
};
template <class N>
inline constexpr bool is_where_v = false;
template <class C, class A, class B>
inline constexpr bool is_where_v<Map<functors::Where, C, A, B>> = true;

template <class N>
inline constexpr bool is_matmul_v = is_instance_v<N, Matmul>;
template <class N>
inline constexpr bool is_number_node_v = is_instance_v<N, Scalar> && !std::is_same_v<typename N::value_type, bool>;
/// A mask operand: a tensor, or an expression over tensors (evaluated once, at its own shape,
/// typically (L, S): far less than the scores of every head), not a number.
template <class N>
inline constexpr bool is_floating_mask_v = !is_instance_v<N, Scalar> && is_floating_v<typename N::value_type>;
template <class N>
inline constexpr bool is_bool_mask_v = !is_instance_v<N, Scalar> && std::is_same_v<typename N::value_type, bool>;

/// How the scores scale q k^T: not at all, `* s`, `s *`, `/ s` (s a number).
enum class ScaleForm : unsigned char { none, times, times_left, divided };
/// How a mask enters: none, `scores + mask`, `mask + scores`, `where(mask, scores, fill)` (fill -inf).
enum class MaskForm : unsigned char { none, added, added_left, where };

/// The form of softmax's input, or what did not match (miss, a compile-time sentence).
struct ScoresForm {
  ScaleForm scale = ScaleForm::none;
  MaskForm mask = MaskForm::none;
  const char* miss = nullptr;
  bool mask_expression = false;  // the mask is an expression, evaluated into a tensor first
};

inline constexpr const char* kNotScores =
    "softmax's input is not matmul(q, k^T) (times or divided by a number, plus a mask)";
inline constexpr const char* kTensorScale =
    "the scale of matmul(q, k^T) is a tensor or an expression, not a number";
inline constexpr const char* kMaskNotTensor =
    "the term added to the scores is a number, not a floating mask (a tensor or an expression over tensors)";
inline constexpr const char* kWhereNotMask =
    "where(mask, scores, fill) needs a bool mask (a tensor or an expression), scores matmul(q, k^T) [* or / a number] "
    "and a number fill";

/// matmul(q, k^T), times or divided by a number.
template <class S>
consteval ScoresForm scaled_form() {
  if constexpr (is_matmul_v<S>) {
    return {};
  } else if constexpr (BinaryMap<S>::value) {
    using B = BinaryMap<S>;
    constexpr bool mul = std::is_same_v<typename B::op, functors::Mul>, div = std::is_same_v<typename B::op, functors::Div>;
    if constexpr ((mul || div) && is_matmul_v<typename B::lhs>)
      return is_number_node_v<typename B::rhs> ? ScoresForm{mul ? ScaleForm::times : ScaleForm::divided}
                                               : ScoresForm{ScaleForm::none, MaskForm::none, kTensorScale};
    else if constexpr (mul && is_matmul_v<typename B::rhs>)
      return is_number_node_v<typename B::lhs> ? ScoresForm{ScaleForm::times_left}
                                               : ScoresForm{ScaleForm::none, MaskForm::none, kTensorScale};
    else
      return {ScaleForm::none, MaskForm::none, kNotScores};
  } else {
    return {ScaleForm::none, MaskForm::none, kNotScores};
  }
}

/// Scaled scores, plus a floating mask or under where(bool mask, ., fill).
template <class P>
consteval ScoresForm scores_form() {
  constexpr ScoresForm plain = scaled_form<P>();
  if constexpr (plain.miss == nullptr) {
    return plain;
  } else if constexpr (!BinaryMap<P>::value) {
    if constexpr (is_where_v<P>) {
      using C = std::remove_cvref_t<decltype(get<0>(std::declval<P>().args))>;
      using S = std::remove_cvref_t<decltype(get<1>(std::declval<P>().args))>;
      using F = std::remove_cvref_t<decltype(get<2>(std::declval<P>().args))>;
      constexpr ScoresForm s = scaled_form<S>();
      if constexpr (s.miss == nullptr && is_bool_mask_v<C> && is_number_node_v<F>)
        return {s.scale, MaskForm::where, nullptr, !is_instance_v<C, Leaf>};
      else return {ScaleForm::none, MaskForm::none, kWhereNotMask};
    } else {
      return plain;
    }
  } else if constexpr (std::is_same_v<typename BinaryMap<P>::op, functors::Add>) {
    using L = typename BinaryMap<P>::lhs;
    using R = typename BinaryMap<P>::rhs;
    constexpr ScoresForm l = scaled_form<L>(), r = scaled_form<R>();
    if constexpr (l.miss == nullptr)
      return is_floating_mask_v<R> ? ScoresForm{l.scale, MaskForm::added, nullptr, !is_instance_v<R, Leaf>}
                                   : ScoresForm{l.scale, MaskForm::none, kMaskNotTensor};
    else if constexpr (r.miss == nullptr)
      return is_floating_mask_v<L> ? ScoresForm{r.scale, MaskForm::added_left, nullptr, !is_instance_v<L, Leaf>}
                                   : ScoresForm{r.scale, MaskForm::none, kMaskNotTensor};
    else
      return {ScaleForm::none, MaskForm::none, weft::detail::has_matmul_v<L> ? l.miss : r.miss};
  } else {
    return plain;
  }
}

/// The formula as a sentence: "matmul(softmax(matmul(q, k^T) * scale + mask, -1), v)".
inline std::string attention_formula(ScoresForm f, std::int64_t dim) {
  if (f.miss != nullptr) return weft::detail::cat("matmul(softmax(x, ", dim, "), v)");
  const std::string product = "matmul(q, k^T)";
  const std::string scaled = f.scale == ScaleForm::times        ? product + " * scale"
                             : f.scale == ScaleForm::divided    ? product + " / scale"
                             : f.scale == ScaleForm::times_left ? "scale * " + product
                                                                : product;
  const std::string scores = f.mask == MaskForm::added        ? scaled + " + mask"
                             : f.mask == MaskForm::added_left ? "mask + " + scaled
                             : f.mask == MaskForm::where      ? "where(mask, " + scaled + ", fill)"
                                                              : scaled;
  return weft::detail::cat("matmul(softmax(", scores, ", ", dim, "), v)");
}

/// The scaled scores inside softmax's input P of form F.
template <ScoresForm F, class P>
const auto& scaled_scores(const P& p) {
  if constexpr (F.mask == MaskForm::none) return p;
  else if constexpr (F.mask == MaskForm::added) return get<0>(p.args);
  else return get<1>(p.args);
}

/// The matmul node of scaled scores of form F.
template <ScoresForm F, class S>
const auto& scores_product(const S& s) {
  if constexpr (F.scale == ScaleForm::none) return s;
  else if constexpr (F.scale == ScaleForm::times_left) return get<1>(s.args);
  else return get<0>(s.args);
}

/// The scale factor of scaled scores of form F: s for `* s` and `s *`, 1 / s for `/ s`.
template <ScoresForm F, class S>
double scores_scale(const S& s) {
  if constexpr (F.scale == ScaleForm::none) return 1.0;
  else if constexpr (F.scale == ScaleForm::times) return double(get<1>(s.args).value);
  else if constexpr (F.scale == ScaleForm::times_left) return double(get<0>(s.args).value);
  else return 1.0 / double(get<1>(s.args).value);
}

/// What runs for matmul(softmax(scores, dim), v): sdpa's arguments, or why not (miss, non-empty).
template <class T>
struct AttentionCall {
  TensorView<const T> q, k, v;
  SdpaOptions options;
  std::string miss;
  bool broadcast = false;  // an operand's batch or head dims expanded (stride-0 views)
  Shape mask_shape;        // the mask's shape where there is one
};

inline namespace WEFT_BACKEND_ABI {

/// The operand shape with `batch` for its batch and head dims (all but the last two).
inline Shape with_batch(const Shape& batch, const Shape& operand) {
  Shape s = batch;
  s.push_back(operand[operand.rank() - 2]);
  s.push_back(operand[operand.rank() - 1]);
  return s;
}

/// The dims of `operand` before its last two, with size-1 dims in front up to `rank`.
inline Shape batch_of(const Shape& operand, int rank) {
  Shape s = Shape::filled(rank - (operand.rank() - 2), 1);
  for (int d = 0; d + 2 < operand.rank(); ++d) s.push_back(operand[d]);
  return s;
}

/// The run-time half of the match: the softmax over the last dim, operands of 2+ dims whose batch
/// and head dims broadcast (as matmul broadcasts them), shapes that multiply, a mask that does not
/// broadcast the scores further, CPU tensors, at least one key, a where's fill of -inf. Evaluates
/// operand expressions of the matmuls (q, k^T, v).
///
/// Broadcast dims become attention's own where they are its grouped-query heads: k^T and v of
/// size 1 at the head dim (-3) where q has H, every other dim as q's (multi-query attention, and
/// the grouped form q (..., Hk, G, L, E), k^T (..., Hk, 1, E, S)), run with enable_gqa, which
/// reads each key and value head once for its query heads. Any other broadcast expands the
/// operands as stride-0 views (no copy; a shared k^T is then packed once per head it serves).
template <ScoresForm F, class P, class V>
AttentionCall<typename V::value_type> attention_call(const Softmax<P>& weights, const V& value) {
  using T = typename V::value_type;
  auto miss = [](auto&&... why) {
    AttentionCall<T> none;
    none.miss = weft::detail::cat(why...);
    return none;
  };
  const Shape scores = weights.shape();  // a weft::Error for a dim out of range, as unfused
  if (weft::detail::wrap_dim_of("softmax", weights.dim, scores) != scores.rank() - 1)
    return miss("softmax is over dim ", weights.dim, " of the scores ", scores, ", attention's is over the last (-1)");
  const auto& scaled = scaled_scores<F>(weights.x);
  const auto& product = scores_product<F>(scaled);
  const TensorView<const T> q = weft::detail::materialize(product.a), kt = weft::detail::materialize(product.b),
                            v = weft::detail::materialize(value);
  const Shape &qs = q.shape(), &ks = kt.shape(), &vs = v.shape();
  const std::string named = weft::detail::cat(" (q ", qs, ", k^T ", ks, ", v ", vs, ")");
  if (qs.rank() < 2 || ks.rank() < 2 || vs.rank() < 2)
    return miss("q, k^T and v need 2+ dims (matmul's vector forms are not attention's)", named);
  if (ks[ks.rank() - 2] != qs[qs.rank() - 1] || vs[vs.rank() - 2] != ks[ks.rank() - 1])
    return miss("the shapes do not multiply", named);
  if (ks[ks.rank() - 1] == 0) return miss("there are no keys (S = 0)", named);
  for (const TensorView<const T>* t : {&q, &kt, &v})
    if (!t->device().is_cpu()) return miss("an operand is on ", t->device(), "; attention from its formula runs on the CPU");
  const int batch_rank = std::max({qs.rank(), ks.rank(), vs.rank()}) - 2;
  const Shape qb = batch_of(qs, batch_rank), kb = batch_of(ks, batch_rank), vb = batch_of(vs, batch_rank);
  const Shape batch = broadcast_shapes("matmul", {qb, kb, vb});  // matmul's own error where they do not
  SdpaOptions options;
  options.scale = scores_scale<F>(scaled);
  const int head = batch_rank - 1;
  Shape kv_batch = batch;
  if (head >= 0) kv_batch[head] = 1;
  const bool grouped = head >= 0 && qb == batch && batch[head] > 1 && kb == kv_batch && vb == kv_batch;
  options.enable_gqa = grouped;
  Shape mask_shape;
  if constexpr (F.mask != MaskForm::none) {
    const auto& p = weights.x;
    if constexpr (F.mask == MaskForm::where) {
      const double fill = double(get<2>(p.args).value);
      if (!(std::isinf(fill) && fill < 0))
        return miss("where(mask, scores, fill) needs fill = -inf (attention's bool mask), got ", fill);
    }
    const auto mask = weft::detail::materialize(get<F.mask == MaskForm::added ? 1 : 0>(p.args));
    const Shape product_shape = with_batch(batch, Shape{qs[qs.rank() - 2], ks[ks.rank() - 1]});
    if (!mask.device().is_cpu() || !broadcasts_to(mask.shape(), product_shape))
      return miss("the mask ", mask.shape(), " on ", mask.device(), " is not a CPU tensor that broadcasts to q k^T's shape ",
                  product_shape);
    options.attn_mask = mask;
    mask_shape = mask.shape();
  }
  const Shape& kv = grouped ? kv_batch : batch;
  return AttentionCall<T>{q.expand(with_batch(batch, qs)), kt.expand(with_batch(kv, ks)).transpose(-2, -1),
                          v.expand(with_batch(kv, vs)), options, {},  // views, read in place
                          qb != batch || kb != kv || vb != kv, mask_shape};
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// matmul(softmax(scores, dim), v), which weft::matmul builds for a weft::Softmax operand:
/// attention (nn::scaled_dot_product_attention: the flash backend's O(L E) memory, no L x S
/// tensor) where scores = matmul(q, k^T) [* s | / s | s *] [+ mask | where(bool mask, ., -inf)]
/// and dim is the last, else the product as written (weft::Matmul of the softmax). Either way it
/// says which under `sdpa` (info). Assigned or evaluated as one; inside a pointwise expression it
/// is evaluated first.
template <class P, class V>
struct SoftmaxMatmul : Expr<SoftmaxMatmul<P, V>> {
  static_assert(std::is_same_v<typename P::value_type, typename V::value_type>,
                "weft::matmul: both operands need the same dtype; cast one with weft::cast<T>(x)");
  using value_type = typename V::value_type;
  using children = weft::detail::TypeList<>;  // one operand to pointwise kernels (expr/dense.hpp)
  static constexpr bool kDense = true;
  static constexpr detail::ScoresForm kForm = detail::scores_form<P>();
  Softmax<P> weights;
  V v;

  /// The same product, op by op.
  Matmul<Softmax<P>, V> unfused() const { return {{}, weights, v}; }
  const char* op_name() const { return "matmul"; }
  Shape shape() const { return unfused().shape(); }
  Tensor<value_type> evaluate() const {
    if (std::optional<Tensor<value_type>> out = attention()) return std::move(*out);
    return unfused().evaluate();
  }
  /// The product written into `out` (contiguous, of its shape): attention's output copied in, or
  /// the unfused product's GEMM writing there; false, with nothing written, where that GEMM cannot
  /// (the caller copies the product in).
  bool evaluate_into(const TensorView<value_type>& out) const {
    if (std::optional<Tensor<value_type>> r = attention()) {
      TensorView<value_type> into = out;
      into = *r;
      return true;
    }
    return unfused().evaluate_into(out);
  }

 private:
  /// Attention's output where the formula matches, else empty; logs which.
  std::optional<Tensor<value_type>> attention() const {
    auto say = [&](const auto&... parts) {  // formatted only when the sdpa log is on
      if (log_enabled(LogComponent::sdpa))
        log_write(LogComponent::sdpa, weft::detail::cat(detail::attention_formula(kForm, weights.dim), parts...));
    };
    auto miss = [&](const std::string& why) {
      say(": not recognized as attention: ", why, "; runs as written (scores, softmax and product, each a tensor)");
      return std::nullopt;
    };
    if constexpr (kForm.miss != nullptr) {
      return miss(kForm.miss);
    } else {
      detail::AttentionCall<value_type> c = detail::attention_call<kForm>(weights, v);
      if (!c.miss.empty()) return miss(c.miss);
      say(": recognized as attention (q ", c.q.shape(), ", k ", c.k.shape(), " = (k^T).transpose(-2, -1), v ",
          c.v.shape(), ", scale ", *c.options.scale, c.options.enable_gqa ? ", grouped-query heads" : "",
          c.broadcast ? ", batch dims broadcast as stride-0 views" : "",
          kForm.mask == detail::MaskForm::where ? ", bool mask" : kForm.mask != detail::MaskForm::none ? ", float mask" : "",
          kForm.mask_expression ? weft::detail::cat(" ", c.mask_shape, " evaluated from its expression") : std::string(),
          ") -> nn::sdpa_forward, no L x S tensor");
      return scaled_dot_product_attention(c.q, c.k, c.v, c.options);
    }
  }
};

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn

namespace weft {
inline namespace WEFT_BACKEND_ABI {

/// matmul(softmax(scores, dim), v) with the softmax a lazy weft::Softmax (its input holds a
/// matmul): a nn::SoftmaxMatmul node, attention where the formula matches (more specialized than
/// weft::matmul, which every other product takes). A translation unit sees it where it includes
/// weft/weft.hpp or this header.
template <class P, Operand B>
  requires HasTensorOperand<B>
nn::SoftmaxMatmul<P, detail::expr_t<B>> matmul(const Softmax<P>& weights, const B& v) {
  return {{}, weights, detail::as_expr(v)};
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft

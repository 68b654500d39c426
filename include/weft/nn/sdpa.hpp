// SPDX-License-Identifier: MIT
/// @file scaled_dot_product_attention, sdpa_forward and sdpa_backward: PyTorch's attention semantics, the backend choice and its log.
#pragma once

#include <string>
#include <type_traits>

#include "weft/log/log.hpp"
#include "weft/nn/sdpa_backend.hpp"
#include "weft/nn/sdpa_cuda.hpp"
#include "weft/backend/attention.hpp"
#include "weft/nn/sdpa_math.hpp"
#include "weft/nn/sdpa_options.hpp"
#include "weft/nn/sdpa_problem.hpp"

namespace weft::nn {

/// The attention output (batch..., Hq, L, Ev) and the log-sum-exp of each query's scaled,
/// masked scores (batch..., Hq, L), in float64 whatever T (the backward pass recomputes every
/// weight from it: 8 bytes a query buy float-accurate gradients); +inf on a query that sees no key.
template <class T>
struct SdpaOutput {
  Tensor<T> out;
  Tensor<double> lse;
};

/// Gradients of the loss with respect to q, k and v (shaped like them).
template <class T>
struct SdpaGradients {
  Tensor<T> dq, dk, dv;
};

namespace detail {
inline namespace WEFT_BACKEND_ABI {

template <class T, class K, class V>
constexpr void check_sdpa_types() {
  static_assert(std::is_same_v<T, K> && std::is_same_v<T, V>,
                "weft::nn attention: q, k and v need one dtype; convert with weft::eval(weft::cast<T>(x))");
  static_assert(is_floating_v<T>, "weft::nn attention: q, k and v need a floating dtype (float, double, half, bfloat16)");
}

template <class T>
std::string sdpa_describe(const TensorView<const T>& q, const TensorView<const T>& k, const TensorView<const T>& v,
                          const SdpaShape& s,
                          const SdpaOptions& o) {
  return weft::detail::cat(dtype_name<T>(), ", q ", q.shape(), ", k ", k.shape(), ", v ", v.shape(),
                           s.causal ? (o.causal_variant == CausalVariant::lower_right ? ", causal lower_right"
                                                                                    : ", causal upper_left")
                                    : "",
                           !o.attn_mask.has_value() ? "" : ", mask", s.group > 1 ? ", gqa" : "",
                           s.dropout_p > 0 ? ", dropout" : "");
}

/// The backend that runs: flash unless a SdpaBackendGuard excludes it. The `sdpa` log says
/// which one ran ("amx-bf16 tiles" when flash's block products run on AMX, "avx512-bf16" on
/// vdpbf16ps, "neon-bfmmla" on BFMMLA) and why flash was refused.
template <class T>
SdpaBackend choose_backend(const char* op, const TensorView<const T>& q, const TensorView<const T>& k,
                           const TensorView<const T>& v, const SdpaShape& s, const SdpaOptions& o) {
  const bool flash = backend_allowed(SdpaBackend::flash), math = backend_allowed(SdpaBackend::math);
  if (!flash && !math)
    fail(op, "no attention backend is allowed (SdpaBackendGuard with an empty list) for q ", q.shape(),
         "; allow SdpaBackend::flash or SdpaBackend::math");
  const SdpaBackend chosen = flash ? SdpaBackend::flash : SdpaBackend::math;
  if (log_enabled(LogComponent::sdpa)) {
    const std::string products = flash ? weft::detail::flash_cpu_products<T>(s) : "";
    log_write(LogComponent::sdpa,
              weft::detail::cat(op, ": ", backend_name(chosen), " backend (cpu", products.empty() ? "" : ", ", products,
                                ", ", sdpa_describe(q, k, v, s, o), ")",
                                flash ? "" : "; flash refused: excluded by SdpaBackendGuard"));
  }
  return chosen;
}

/// Writes a dense buffer into a new contiguous tensor, rounding to its dtype.
template <class A, class T>
void store(const std::vector<A>& from, Tensor<T>& to) {
  T* p = to.data();
  for (std::size_t i = 0; i < from.size(); ++i) p[i] = T(from[i]);
}

template <class T>
void check_sdpa_tensors(const char* op, std::initializer_list<const TensorView<const T>*> ts) {
  for (const TensorView<const T>* t : ts) {
    if (!t->defined()) fail(op, "an operand is an empty (default-constructed) tensor");
    weft::detail::check_device_compiled(op, t->device());
    if (!t->device().is_cpu())
      fail(op, "an operand of shape ", t->shape(), " is on ", t->device(),
           ": attention runs on the CPU in this version; move the tensors with .to(weft::Device::cpu())");
  }
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// Attention's output and log-sum-exp: out = softmax(q k^T scale + mask) v, with dropout on the
/// weights (docs/attention.md). q (batch..., Hq, L, E), k (batch..., H, S, E), v (batch..., H, S, Ev).
template <SingleTensor Q, SingleTensor K, SingleTensor V>
SdpaOutput<typename Q::value_type> sdpa_forward(const Q& query, const K& key, const V& value, const SdpaOptions& o = {}) {
  using T = typename Q::value_type;
  detail::check_sdpa_types<T, typename K::value_type, typename V::value_type>();
  using Acc = math_t<T>;
  const TensorView<const T> q = query, k = key, v = value;
  if (q.defined() && q.device().is_cuda()) {  // FlashAttention-2 on tensor cores (sdpa_cuda.hpp)
    auto [out, lse] = detail::sdpa_forward_cuda(q, k, v, o);
    return SdpaOutput<T>{std::move(out), std::move(lse)};
  }
  const char* op = "nn::sdpa_forward";
  detail::check_sdpa_tensors<T>(op, {&q, &k, &v});
  const detail::SdpaShape s = detail::sdpa_shape(op, q.shape(), k.shape(), v.shape(), o);
  SdpaOutput<T> r{empty<T>(s.out_shape()), empty<double>(s.lse_shape())};
  const auto bias = detail::sdpa_bias<Acc>(o.attn_mask, s);
  if (detail::choose_backend(op, q, k, v, s, o) == SdpaBackend::math) {
    const detail::SdpaMathState<Acc> st =
        detail::sdpa_math_forward<Acc>(detail::sdpa_rows(q), detail::sdpa_rows(k), detail::sdpa_rows(v), bias, s);
    detail::store(st.out, r.out);
    detail::store(st.lse, r.lse);
  } else {
    weft::detail::run_flash_forward(s, q, k, v, bias, r.out.data(), r.lse.data());
  }
  return r;
}

/// torch.nn.functional.scaled_dot_product_attention: softmax(q k^T scale + mask) v.
template <SingleTensor Q, SingleTensor K, SingleTensor V>
Tensor<typename Q::value_type> scaled_dot_product_attention(const Q& q, const K& k, const V& v,
                                                            const SdpaOptions& o = {}) {
  return std::move(sdpa_forward(q, k, v, o).out);
}

/// Gradients of attention given dout (the loss's gradient with respect to out) and the forward
/// pass's out and lse, with the same options (and dropout seed) as the forward call.
template <SingleTensor D, SingleTensor Q, SingleTensor K, SingleTensor V, SingleTensor O, SingleTensor Lse>
SdpaGradients<typename Q::value_type> sdpa_backward(const D& grad_out, const Q& query, const K& key, const V& value,
                                                    const O& output, const Lse& logsumexp, const SdpaOptions& o = {}) {
  using T = typename Q::value_type;
  detail::check_sdpa_types<T, typename K::value_type, typename V::value_type>();
  static_assert(std::is_same_v<typename D::value_type, T> && std::is_same_v<typename O::value_type, T>,
                "weft::nn::sdpa_backward: dout and out need q's dtype");
  static_assert(std::is_same_v<typename Lse::value_type, double>,
                "weft::nn::sdpa_backward: lse is the float64 tensor sdpa_forward returned");
  const TensorView<const T> dout = grad_out, q = query, k = key, v = value, out = output;
  const TensorView<const double> lse = logsumexp;
  using Acc = math_t<T>;
  const char* op = "nn::sdpa_backward";
  if (q.defined() && q.device().is_cuda())
    weft::detail::fail(op, "q ", q.shape(), " is on ", q.device(), ": the CUDA backward is not written yet (the CUDA "
                       "forward is); run the backward on the CPU");
  detail::check_sdpa_tensors<T>(op, {&dout, &q, &k, &v, &out});
  if (!lse.defined() || !lse.device().is_cpu())
    weft::detail::fail(op, "lse must be the CPU tensor sdpa_forward returned");
  const detail::SdpaShape s = detail::sdpa_shape(op, q.shape(), k.shape(), v.shape(), o);
  if (dout.shape() != s.out_shape() || out.shape() != s.out_shape() || lse.shape() != s.lse_shape())
    weft::detail::fail(op, "dout (", dout.shape(), ") and out (", out.shape(), ") must have shape ", s.out_shape(),
                       " and lse (", lse.shape(), ") shape ", s.lse_shape(), " for q ", q.shape(), ", k ", k.shape(),
                       ", v ", v.shape(), "; pass the tensors sdpa_forward returned for these inputs");
  SdpaGradients<T> g{empty<T>(q.shape()), empty<T>(k.shape()), empty<T>(v.shape())};
  const auto bias = detail::sdpa_bias<Acc>(o.attn_mask, s);
  if (detail::choose_backend(op, q, k, v, s, o) == SdpaBackend::math) {
    const detail::SdpaMathState<Acc> st =
        detail::sdpa_math_forward<Acc>(detail::sdpa_rows(q), detail::sdpa_rows(k), detail::sdpa_rows(v), bias, s);
    const detail::SdpaMathGradients<Acc> mg = detail::sdpa_math_backward(detail::sdpa_rows(dout), st, s);
    detail::store(mg.dq, g.dq);
    detail::store(mg.dk, g.dk);
    detail::store(mg.dv, g.dv);
  } else {
    const std::vector<double> lse_v = detail::sdpa_values(lse);
    weft::detail::run_flash_backward(s, q, k, v, bias, out, dout, lse_v.data(), g.dq.data(), g.dk.data(), g.dv.data());
  }
  return g;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn

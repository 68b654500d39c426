// SPDX-License-Identifier: MIT
/// @file Attention on CUDA tensors: the checks, the refusals and the log, before backend/attention.hpp launches the FlashAttention-2 forward.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "weft/backend/attention.hpp"
#include "weft/log/log.hpp"
#include "weft/nn/sdpa_backend.hpp"
#include "weft/nn/sdpa_options.hpp"
#include "weft/nn/sdpa_problem.hpp"


namespace weft::nn::detail {

inline namespace WEFT_BACKEND_ABI {

/// sdpa_forward on CUDA tensors: (out, lse), both on q's device.
template <class T>
std::pair<Tensor<T>, Tensor<double>> sdpa_forward_cuda(const TensorView<const T>& q, const TensorView<const T>& k, const TensorView<const T>& v,
                                                      const SdpaOptions& o) {
  const char* op = "nn::sdpa_forward";
  weft::detail::check_device_compiled(op, q.device());
  for (const TensorView<const T>* t : {&q, &k, &v}) {
    if (!t->defined()) fail(op, "an operand is an empty (default-constructed) tensor");
    if (t->device() != q.device())
      fail(op, "q is on ", q.device(), " but an operand of shape ", t->shape(), " is on ", t->device(),
           "; move q, k and v to one device");
  }
  auto refuse = [&](const std::string& why) {
    if (log_enabled(LogComponent::sdpa)) log_write(LogComponent::sdpa, weft::detail::cat(op, ": flash refused: ", why));
    fail(op, "q ", q.shape(), ", k ", k.shape(), ", v ", v.shape(), " on ", q.device(), ": ", why);
  };
  weft::detail::FlashCudaRequest req{std::string(dtype_name<T>()), is_16bit_float_v<T>, 0, 0, o.attn_mask.has_value(),
                                     o.dropout_p, backend_allowed(SdpaBackend::flash),
                                     weft::detail::cuda_flash_head_dims()};
  if (req.has_mask) refuse(weft::detail::flash_cuda_refusal(req));  // before sdpa_shape's CPU-only mask check
  const SdpaShape s = sdpa_shape(op, q.shape(), k.shape(), v.shape(), o);
  req.E = s.E, req.Ev = s.Ev;
  if (const std::string why = weft::detail::flash_cuda_refusal(req); !why.empty()) refuse(why);
  std::pair<Tensor<T>, Tensor<double>> r{empty<T>(s.out_shape(), q.device()),
                                         empty<double>(s.lse_shape(), q.device())};
  weft::detail::run_flash_forward(s, q, k, v, SdpaRows<math_t<T>>{}, r.first.data(), r.second.data());
  if (log_enabled(LogComponent::sdpa)) {
    const bool lower = o.causal_variant == CausalVariant::lower_right;
    log_write(LogComponent::sdpa,
              weft::detail::cat(op, ": flash backend (", q.device(), ", ", dtype_name<T>(), ", q ", q.shape(), ", k ",
                                k.shape(), ", v ", v.shape(), s.causal ? (lower ? ", causal lower_right" : ", causal")
                                                                       : "",
                                s.group > 1 ? ", gqa" : "", "; FlashAttention-2 sm80 mma, head dim ", s.E, ")"));
  }
  return r;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn::detail

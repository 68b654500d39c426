// SPDX-License-Identifier: MIT
/// @file Adam and AdamW (amsgrad, maximize, coupled or decoupled weight decay), as torch.optim.
#pragma once

#include "weft/optim/optimizer.hpp"
#include "weft/optim/options.hpp"

namespace weft::optim {
inline namespace WEFT_BACKEND_ABI {

namespace detail {

/// The update shared by Adam (kDecoupled = false: g += wd p) and AdamW (p *= 1 - lr wd):
///   m = m + (1 - b1)(g - m)                 exp_avg.lerp_(g, 1 - b1)
///   v = b2 v + (1 - b2) g^2                 (amsgrad: vmax = max(vmax, v), used for v below)
///   p = p - lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
template <class Derived, Element P, class S, class Options, bool kDecoupled>
class AdamFamily : public Optimizer<Derived, P, S, Options> {
 public:
  static constexpr const char* kName = kDecoupled ? "optim::AdamW" : "optim::Adam";

  AdamFamily(Params<P> params, Options options) : AdamFamily::Optimizer(kName, std::move(params), options) {}
  explicit AdamFamily(std::vector<ParamGroup<P, Options>> groups) : AdamFamily::Optimizer(kName, std::move(groups)) {}

  static std::vector<StateSpec> state_specs(const Options& o) {
    if (o.amsgrad) return {{"exp_avg"}, {"exp_avg_sq"}, {"max_exp_avg_sq"}};
    return {{"exp_avg"}, {"exp_avg_sq"}};
  }

  static void check_options(const Options& o) {
    check_nonnegative(kName, {{"lr", o.lr}, {"eps", o.eps}, {"weight_decay", o.weight_decay}});
    check_beta(kName, "betas.first", o.betas.first);
    check_beta(kName, "betas.second", o.betas.second);
  }

  template <class Ctx>
  void update(const Ctx& ctx) {
    const Options& o = ctx.options();
    const double b1 = o.betas.first, b2 = o.betas.second;
    const auto& p = ctx.param();
    TensorList<S> m = this->slot("exp_avg"), v = this->slot("exp_avg_sq");
    auto g = [&] {
      if constexpr (kDecoupled) return ctx.grad;
      else return ctx.grad + o.weight_decay * p;
    }();
    auto decayed = [&] {
      if constexpr (kDecoupled) return (1.0 - o.lr * o.weight_decay) * p;
      else return weft::detail::as_expr(p);
    }();
    auto m1 = m + (1.0 - b1) * (g - m);
    auto v1 = b2 * v + (1.0 - b2) * (g * g);
    const auto step_size = o.lr / (1.0 - step_pow(b1, ctx.t));
    const auto bc2_sqrt = step_sqrt(1.0 - step_pow(b2, ctx.t));
    if (o.amsgrad) {
      TensorList<S> vmax = this->slot("max_exp_avg_sq");
      auto vmax1 = weft::maximum(vmax, v1);
      ctx.apply(decayed - step_size * m1 / (weft::sqrt(vmax1) / bc2_sqrt + o.eps), Ctx::write(m, m1),
                Ctx::write(v, v1), Ctx::write(vmax, vmax1));
    } else {
      ctx.apply(decayed - step_size * m1 / (weft::sqrt(v1) / bc2_sqrt + o.eps), Ctx::write(m, m1), Ctx::write(v, v1));
    }
  }
};

}  // namespace detail

/// torch.optim.Adam as one fused foreach kernel per step.
template <Element P = float, class S = default_state_t<P>>
class Adam : public detail::AdamFamily<Adam<P, S>, P, S, AdamOptions, false> {
 public:
  explicit Adam(TensorList<P> params, AdamOptions options = {}) : Adam::AdamFamily(std::move(params), options) {}
  explicit Adam(std::vector<ad::Var<P>> params, AdamOptions options = {})
      : Adam::AdamFamily(std::move(params), options) {}
  explicit Adam(std::vector<ParamGroup<P, AdamOptions>> groups) : Adam::AdamFamily(std::move(groups)) {}
};

/// torch.optim.AdamW (decoupled weight decay) as one fused foreach kernel per step.
template <Element P = float, class S = default_state_t<P>>
class AdamW : public detail::AdamFamily<AdamW<P, S>, P, S, AdamWOptions, true> {
 public:
  explicit AdamW(TensorList<P> params, AdamWOptions options = {}) : AdamW::AdamFamily(std::move(params), options) {}
  explicit AdamW(std::vector<ad::Var<P>> params, AdamWOptions options = {})
      : AdamW::AdamFamily(std::move(params), options) {}
  explicit AdamW(std::vector<ParamGroup<P, AdamWOptions>> groups) : AdamW::AdamFamily(std::move(groups)) {}
};

template <Element P>
Adam(TensorList<P>, AdamOptions) -> Adam<P>;
template <Element P>
Adam(TensorList<P>) -> Adam<P>;
template <Element P>
AdamW(TensorList<P>, AdamWOptions) -> AdamW<P>;
template <Element P>
AdamW(TensorList<P>) -> AdamW<P>;

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::optim

// SPDX-License-Identifier: MIT
/// @file Adam and AdamW (amsgrad, maximize, coupled or decoupled weight decay), as torch.optim.
#pragma once

#include "weft/optim/optimizer.hpp"
#include "weft/optim/options.hpp"

namespace weft::optim {

namespace detail {

/// The update shared by Adam (kDecoupled = false: g += wd p) and AdamW (p *= 1 - lr wd):
///   m = m + (1 - b1)(g - m)                 exp_avg.lerp_(g, 1 - b1)
///   v = b2 v + (1 - b2) g^2                 (amsgrad: vmax = max(vmax, v), used for v below)
///   p = p - lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
template <class Derived, Element P, class S, class Options, bool kDecoupled>
class AdamFamily : public Optimizer<Derived, P, S> {
  using Base = Optimizer<Derived, P, S>;

 public:
  AdamFamily(const char* name, TensorList<P> params, Options options)
      : Base(name, std::move(params)), name_(name), options_(options) {
    check_options();
  }

  Options& options() { return options_; }
  const Options& options() const { return options_; }

  void check_options() const {
    check_nonnegative(name_, "lr", options_.lr);
    check_nonnegative(name_, "eps", options_.eps);
    check_nonnegative(name_, "weight_decay", options_.weight_decay);
    check_beta(name_, "betas.first", options_.betas.first);
    check_beta(name_, "betas.second", options_.betas.second);
  }

  template <class Ctx>
  void update(const Ctx& ctx) {
    const Options& o = options_;
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

 private:
  const char* name_;
  Options options_;
};

}  // namespace detail

/// torch.optim.Adam as one fused foreach kernel per step.
template <Element P, class S = default_state_t<P>>
class Adam : public detail::AdamFamily<Adam<P, S>, P, S, AdamOptions, false> {
 public:
  explicit Adam(TensorList<P> params, AdamOptions options = {})
      : detail::AdamFamily<Adam<P, S>, P, S, AdamOptions, false>("optim::Adam", std::move(params), options) {}
};

/// torch.optim.AdamW (decoupled weight decay) as one fused foreach kernel per step.
template <Element P, class S = default_state_t<P>>
class AdamW : public detail::AdamFamily<AdamW<P, S>, P, S, AdamWOptions, true> {
 public:
  explicit AdamW(TensorList<P> params, AdamWOptions options = {})
      : detail::AdamFamily<AdamW<P, S>, P, S, AdamWOptions, true>("optim::AdamW", std::move(params), options) {}
};

template <Element P>
Adam(TensorList<P>, AdamOptions) -> Adam<P>;
template <Element P>
Adam(TensorList<P>) -> Adam<P>;
template <Element P>
AdamW(TensorList<P>, AdamWOptions) -> AdamW<P>;
template <Element P>
AdamW(TensorList<P>) -> AdamW<P>;

}  // namespace weft::optim

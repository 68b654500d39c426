// SPDX-License-Identifier: MIT
/// @file Lion (Chen et al. 2023): sign of an interpolated momentum, decoupled weight decay.
#pragma once

#include "weft/optim/optimizer.hpp"
#include "weft/optim/options.hpp"

namespace weft::optim {
inline namespace WEFT_BACKEND_ABI {

/// Lion as one fused foreach kernel per step (see LionOptions for the formula).
template <Element P = float, class S = default_state_t<P>>
class Lion : public Optimizer<Lion<P, S>, P, S, LionOptions> {
 public:
  explicit Lion(TensorList<P> params, LionOptions options = {})
      : Lion::Optimizer("optim::Lion", std::move(params), options) {}
  explicit Lion(std::vector<ad::Var<P>> params, LionOptions options = {})
      : Lion::Optimizer("optim::Lion", std::move(params), options) {}
  explicit Lion(std::vector<ParamGroup<P, LionOptions>> groups) : Lion::Optimizer("optim::Lion", std::move(groups)) {}

  static std::vector<StateSpec> state_specs(const LionOptions&) { return {{"exp_avg"}}; }

  static void check_options(const LionOptions& o) {
    const char* op = "optim::Lion";
    detail::check_nonnegative(op, {{"lr", o.lr}, {"weight_decay", o.weight_decay}});
    detail::check_beta(op, "betas.first", o.betas.first);
    detail::check_beta(op, "betas.second", o.betas.second);
  }

  template <class Ctx>
  void update(const Ctx& ctx) {
    const LionOptions& o = ctx.options();
    const double b1 = o.betas.first, b2 = o.betas.second;
    const auto& p = ctx.param();
    TensorList<S> m = this->slot("exp_avg");
    const auto& g = ctx.grad;
    auto direction = weft::sign(b1 * m + (1.0 - b1) * g);
    ctx.apply((1.0 - o.lr * o.weight_decay) * p - o.lr * direction, Ctx::write(m, b2 * m + (1.0 - b2) * g));
  }
};

template <Element P>
Lion(TensorList<P>, LionOptions) -> Lion<P>;
template <Element P>
Lion(TensorList<P>) -> Lion<P>;

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::optim

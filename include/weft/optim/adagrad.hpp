// SPDX-License-Identifier: MIT
/// @file Adagrad (lr decay, weight decay, initial accumulator, maximize), as torch.optim.Adagrad.
#pragma once

#include "weft/optim/optimizer.hpp"
#include "weft/optim/options.hpp"

namespace weft::optim {
inline namespace WEFT_BACKEND_ABI {

/// torch.optim.Adagrad as one fused foreach kernel per step (see AdagradOptions for the formula).
template <Element P = float, class S = default_state_t<P>>
class Adagrad : public Optimizer<Adagrad<P, S>, P, S, AdagradOptions> {
 public:
  explicit Adagrad(TensorList<P> params, AdagradOptions options = {})
      : Adagrad::Optimizer("optim::Adagrad", std::move(params), options) {}
  explicit Adagrad(std::vector<ad::Var<P>> params, AdagradOptions options = {})
      : Adagrad::Optimizer("optim::Adagrad", std::move(params), options) {}
  explicit Adagrad(std::vector<ParamGroup<P, AdagradOptions>> groups)
      : Adagrad::Optimizer("optim::Adagrad", std::move(groups)) {}

  static std::vector<StateSpec> state_specs(const AdagradOptions& o) { return {{"sum", o.initial_accumulator_value}}; }

  static void check_options(const AdagradOptions& o) {
    const char* op = "optim::Adagrad";
    detail::check_nonnegative(op, {{"lr", o.lr},
                                   {"lr_decay", o.lr_decay},
                                   {"weight_decay", o.weight_decay},
                                   {"initial_accumulator_value", o.initial_accumulator_value},
                                   {"eps", o.eps}});
  }

  template <class Ctx>
  void update(const Ctx& ctx) {
    const AdagradOptions& o = ctx.options();
    const auto& p = ctx.param();
    TensorList<S> sum = this->slot("sum");
    auto g = ctx.grad + o.weight_decay * p;
    auto sum1 = sum + g * g;
    const auto clr = o.lr / (1.0 + (ctx.t - 1.0) * o.lr_decay);
    ctx.apply(p - clr * g / (weft::sqrt(sum1) + o.eps), Ctx::write(sum, sum1));
  }
};

template <Element P>
Adagrad(TensorList<P>, AdagradOptions) -> Adagrad<P>;
template <Element P>
Adagrad(TensorList<P>) -> Adagrad<P>;

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::optim

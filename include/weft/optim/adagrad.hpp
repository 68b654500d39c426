// SPDX-License-Identifier: MIT
/// @file Adagrad (lr decay, weight decay, initial accumulator, maximize), as torch.optim.Adagrad.
#pragma once

#include "weft/optim/optimizer.hpp"
#include "weft/optim/options.hpp"

namespace weft::optim {

/// torch.optim.Adagrad as one fused foreach kernel per step (see AdagradOptions for the formula).
template <Element P, class S = default_state_t<P>>
class Adagrad : public Optimizer<Adagrad<P, S>, P, S> {
  using Base = Optimizer<Adagrad<P, S>, P, S>;

 public:
  explicit Adagrad(TensorList<P> params, AdagradOptions options = {})
      : Base("optim::Adagrad", std::move(params)), options_(options) {
    check_options();
    this->slot("sum", options_.initial_accumulator_value);
  }

  AdagradOptions& options() { return options_; }
  const AdagradOptions& options() const { return options_; }

  void check_options() const {
    const char* op = "optim::Adagrad";
    detail::check_nonnegative(op, "lr", options_.lr);
    detail::check_nonnegative(op, "lr_decay", options_.lr_decay);
    detail::check_nonnegative(op, "weight_decay", options_.weight_decay);
    detail::check_nonnegative(op, "initial_accumulator_value", options_.initial_accumulator_value);
    detail::check_nonnegative(op, "eps", options_.eps);
  }

  template <class Ctx>
  void update(const Ctx& ctx) {
    const AdagradOptions& o = options_;
    const auto& p = ctx.param();
    TensorList<S> sum = this->slot("sum", o.initial_accumulator_value);
    auto g = ctx.grad + o.weight_decay * p;
    auto sum1 = sum + g * g;
    const auto clr = o.lr / (1.0 + (ctx.t - 1.0) * o.lr_decay);
    ctx.apply(p - clr * g / (weft::sqrt(sum1) + o.eps), Ctx::write(sum, sum1));
  }

 private:
  AdagradOptions options_;
};

template <Element P>
Adagrad(TensorList<P>, AdagradOptions) -> Adagrad<P>;
template <Element P>
Adagrad(TensorList<P>) -> Adagrad<P>;

}  // namespace weft::optim

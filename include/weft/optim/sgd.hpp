// SPDX-License-Identifier: MIT
/// @file SGD with momentum, dampening, Nesterov, weight decay and maximize, as torch.optim.SGD.
#pragma once

#include "weft/optim/optimizer.hpp"
#include "weft/optim/options.hpp"

namespace weft::optim {
inline namespace WEFT_BACKEND_ABI {

/// torch.optim.SGD as one fused foreach kernel per step (see SGDOptions for the formula).
template <Element P = float, class S = default_state_t<P>>
class SGD : public Optimizer<SGD<P, S>, P, S, SGDOptions> {
 public:
  explicit SGD(TensorList<P> params, SGDOptions options = {})
      : SGD::Optimizer("optim::SGD", std::move(params), options) {}
  explicit SGD(std::vector<ad::Var<P>> params, SGDOptions options = {})
      : SGD::Optimizer("optim::SGD", std::move(params), options) {}
  explicit SGD(std::vector<ParamGroup<P, SGDOptions>> groups) : SGD::Optimizer("optim::SGD", std::move(groups)) {}

  static std::vector<StateSpec> state_specs(const SGDOptions& o) {
    if (o.momentum == 0.0) return {};
    return {{"momentum_buffer"}};
  }

  static void check_options(const SGDOptions& o) {
    const char* op = "optim::SGD";
    detail::check_nonnegative(op, {{"lr", o.lr}, {"momentum", o.momentum}, {"weight_decay", o.weight_decay}});
    if (o.nesterov && (o.momentum <= 0.0 || o.dampening != 0.0))
      detail::fail(op, "nesterov needs momentum > 0 and dampening = 0 (got momentum ", o.momentum, ", dampening ",
                   o.dampening, ")");
  }

  template <class Ctx>
  void update(const Ctx& ctx) {
    const SGDOptions& o = ctx.options();
    const auto& p = ctx.param();
    auto d = ctx.grad + o.weight_decay * p;  // d = g + wd p
    if (o.momentum == 0.0) return ctx.apply(p - o.lr * d);
    // PyTorch's buffer starts as a copy of d: the first step weighs the (zero) buffer by 0, d by 1.
    const bool first = !this->slot_started("momentum_buffer");
    TensorList<S> buf = this->slot("momentum_buffer");
    auto buf1 = (first ? 0.0 : o.momentum) * buf + (first ? 1.0 : 1.0 - o.dampening) * d;
    auto direction = weft::where(o.nesterov, d + o.momentum * buf1, buf1);
    ctx.apply(p - o.lr * direction, Ctx::write(buf, buf1));
  }
};

template <Element P>
SGD(TensorList<P>, SGDOptions) -> SGD<P>;
template <Element P>
SGD(TensorList<P>) -> SGD<P>;

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::optim

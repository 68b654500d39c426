// SPDX-License-Identifier: MIT
/// @file RMSprop (centered, momentum, weight decay, maximize), as torch.optim.RMSprop.
#pragma once

#include "weft/optim/optimizer.hpp"
#include "weft/optim/options.hpp"

namespace weft::optim {
inline namespace WEFT_BACKEND_ABI {

/// torch.optim.RMSprop as one fused foreach kernel per step:
///   sq = alpha sq + (1 - alpha) g^2
///   avg = sqrt(sq) + eps, or centered: ga = ga + (1 - alpha)(g - ga), avg = sqrt(sq - ga^2) + eps
///   p -= lr g / avg, or with momentum: buf = momentum buf + g / avg, p -= lr buf
template <Element P = float, class S = default_state_t<P>>
class RMSprop : public Optimizer<RMSprop<P, S>, P, S, RMSpropOptions> {
 public:
  explicit RMSprop(TensorList<P> params, RMSpropOptions options = {})
      : RMSprop::Optimizer("optim::RMSprop", std::move(params), options) {}
  explicit RMSprop(std::vector<ad::Var<P>> params, RMSpropOptions options = {})
      : RMSprop::Optimizer("optim::RMSprop", std::move(params), options) {}
  explicit RMSprop(std::vector<ParamGroup<P, RMSpropOptions>> groups)
      : RMSprop::Optimizer("optim::RMSprop", std::move(groups)) {}

  static std::vector<StateSpec> state_specs(const RMSpropOptions& o) {
    std::vector<StateSpec> specs{{"square_avg"}};
    if (o.centered) specs.push_back({"grad_avg"});
    if (o.momentum > 0.0) specs.push_back({"momentum_buffer"});
    return specs;
  }

  static void check_options(const RMSpropOptions& o) {
    const char* op = "optim::RMSprop";
    detail::check_nonnegative(
        op, {{"lr", o.lr}, {"alpha", o.alpha}, {"eps", o.eps}, {"weight_decay", o.weight_decay}, {"momentum", o.momentum}});
  }

  template <class Ctx>
  void update(const Ctx& ctx) {
    const RMSpropOptions& o = ctx.options();
    const auto& p = ctx.param();
    TensorList<S> sq = this->slot("square_avg");
    auto g = ctx.grad + o.weight_decay * p;
    auto sq1 = o.alpha * sq + (1.0 - o.alpha) * (g * g);
    auto finish = [&](const auto& avg, const auto&... writes) {
      if (o.momentum > 0.0) {
        TensorList<S> buf = this->slot("momentum_buffer");
        auto buf1 = o.momentum * buf + g / avg;
        ctx.apply(p - o.lr * buf1, writes..., Ctx::write(buf, buf1));
      } else {
        ctx.apply(p - o.lr * (g / avg), writes...);
      }
    };
    if (o.centered) {
      TensorList<S> ga = this->slot("grad_avg");
      auto ga1 = ga + (1.0 - o.alpha) * (g - ga);
      finish(weft::sqrt(sq1 - ga1 * ga1) + o.eps, Ctx::write(sq, sq1), Ctx::write(ga, ga1));
    } else {
      finish(weft::sqrt(sq1) + o.eps, Ctx::write(sq, sq1));
    }
  }
};

template <Element P>
RMSprop(TensorList<P>, RMSpropOptions) -> RMSprop<P>;
template <Element P>
RMSprop(TensorList<P>) -> RMSprop<P>;

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::optim

// SPDX-License-Identifier: MIT
/// @file Options of weft's optimizers: plain structs with PyTorch's names and defaults.
///
/// Every struct also has `master_weights` (16-bit parameters get float32 master copies that the
/// step updates; the parameters are their rounded values, written by the same kernel). There is
/// no `capturable` (PyTorch's flag for steps without host reads): CUDA steps always keep the step
/// count on the device, and on the CPU the host is the device (docs/optimizers.md). Any member
/// may change between steps (schedules: `opt.options().lr = ...`); nothing is re-planned or
/// recompiled, the numbers are kernel arguments. Each struct's `for_each_option(o, f)` calls
/// `f(name, member)` for every member (a double& or a bool&; betas are "betas.0" and "betas.1"):
/// the hyperparameters of a state dict (optim/state_dict.hpp).
#pragma once

#include <type_traits>
#include <utility>

#include "weft/core/dtype.hpp"

namespace weft::optim {

/// torch.optim.SGD: d = g + wd p; buf = momentum buf + (1 - dampening) d (buf = d at the first
/// step); d = nesterov ? d + momentum buf : buf; p -= lr d.
struct SGDOptions {
  double lr = 1e-3;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
  bool maximize = false;
  bool master_weights = false;
};
template <class F>
void for_each_option(SGDOptions& o, F&& f) {
  f("lr", o.lr); f("momentum", o.momentum); f("dampening", o.dampening); f("weight_decay", o.weight_decay);
  f("nesterov", o.nesterov); f("maximize", o.maximize); f("master_weights", o.master_weights);
}

/// torch.optim.Adam (weight decay 0 by default, added to the gradient: g += wd p) and AdamW (1e-2 by default, decoupled:
/// p *= 1 - lr wd). Two types, so that an AdamOptions cannot configure AdamW by mistake; the flag
/// only picks the default (a bool, not the default itself: clang 16 takes no double template
/// arguments).
template <bool kDecoupledWeightDecay>
struct AdamFamilyOptions {
  double lr = 1e-3;
  std::pair<double, double> betas = {0.9, 0.999};
  double eps = 1e-8;
  double weight_decay = kDecoupledWeightDecay ? 1e-2 : 0.0;
  bool amsgrad = false;
  bool maximize = false;
  bool master_weights = false;
};
using AdamOptions = AdamFamilyOptions<false>;
using AdamWOptions = AdamFamilyOptions<true>;
template <bool kDecoupledWeightDecay, class F>
void for_each_option(AdamFamilyOptions<kDecoupledWeightDecay>& o, F&& f) {
  f("lr", o.lr); f("betas.0", o.betas.first); f("betas.1", o.betas.second); f("eps", o.eps);
  f("weight_decay", o.weight_decay); f("amsgrad", o.amsgrad); f("maximize", o.maximize);
  f("master_weights", o.master_weights);
}

/// torch.optim.Adagrad: sum += g^2; p -= lr / (1 + (t - 1) lr_decay) * g / (sqrt(sum) + eps).
struct AdagradOptions {
  double lr = 1e-2;
  double lr_decay = 0.0;
  double weight_decay = 0.0;
  double initial_accumulator_value = 0.0;
  double eps = 1e-10;
  bool maximize = false;
  bool master_weights = false;
};
template <class F>
void for_each_option(AdagradOptions& o, F&& f) {
  f("lr", o.lr); f("lr_decay", o.lr_decay); f("weight_decay", o.weight_decay);
  f("initial_accumulator_value", o.initial_accumulator_value); f("eps", o.eps); f("maximize", o.maximize);
  f("master_weights", o.master_weights);
}

/// torch.optim.RMSprop: sq = alpha sq + (1 - alpha) g^2; centered subtracts the squared mean
/// gradient; with momentum the step goes through a buffer.
struct RMSpropOptions {
  double lr = 1e-2;
  double alpha = 0.99;
  double eps = 1e-8;
  double weight_decay = 0.0;
  double momentum = 0.0;
  bool centered = false;
  bool maximize = false;
  bool master_weights = false;
};
template <class F>
void for_each_option(RMSpropOptions& o, F&& f) {
  f("lr", o.lr); f("alpha", o.alpha); f("eps", o.eps); f("weight_decay", o.weight_decay); f("momentum", o.momentum);
  f("centered", o.centered); f("maximize", o.maximize); f("master_weights", o.master_weights);
}

/// Lion (Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms"; not in torch.optim):
/// p = p (1 - lr wd) - lr sign(b1 m + (1 - b1) g); m = b2 m + (1 - b2) g.
struct LionOptions {
  double lr = 1e-4;
  std::pair<double, double> betas = {0.9, 0.99};
  double weight_decay = 0.0;
  bool maximize = false;
  bool master_weights = false;
};
template <class F>
void for_each_option(LionOptions& o, F&& f) {
  f("lr", o.lr); f("betas.0", o.betas.first); f("betas.1", o.betas.second); f("weight_decay", o.weight_decay);
  f("maximize", o.maximize); f("master_weights", o.master_weights);
}

/// The state dtype an optimizer defaults to: float64 for float64 parameters, float32 otherwise.
template <class P>
using default_state_t = std::conditional_t<std::is_same_v<P, double>, double, float>;

}  // namespace weft::optim

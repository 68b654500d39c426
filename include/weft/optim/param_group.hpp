// SPDX-License-Identifier: MIT
/// @file Params and ParamGroup: what an optimizer updates (tensors or autograd leaves), in groups with their own options.
#pragma once

#include <utility>
#include <vector>

#include "weft/ad/var.hpp"
#include "weft/core/tensor_list.hpp"

namespace weft::optim {

/// The parameters of one group: tensors, whose gradients the caller passes (`opt.step(grads)`),
/// or autograd leaves (`ad::param`), whose grad() the optimizer reads at every step
/// (`opt.step()`). The optimizer updates the values in place (a leaf's through its data()).
template <Element P>
struct Params {
  Params(TensorList<P> tensors) : tensors(std::move(tensors)) {}  // NOLINT: implicit, either kind is a Params
  Params(std::vector<ad::Var<P>> vars) : vars(std::move(vars)) {}  // NOLINT
  TensorList<P> tensors;
  std::vector<ad::Var<P>> vars;
};

/// One parameter group (torch's param_groups entry): its parameters and the options they step
/// with. `optim::AdamW<float> opt({{decay, {.weight_decay = 0.1}}, {no_decay, {.weight_decay = 0}}});`
template <Element P, class Options>
struct ParamGroup {
  Params<P> params;
  Options options;
};

}  // namespace weft::optim

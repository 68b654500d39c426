// SPDX-License-Identifier: MIT
/// @file weft::optim: every optimizer (one fused foreach kernel per step each) and the learning-rate
/// schedulers (torch.optim.lr_scheduler's formulas).
#pragma once

#include "weft/optim/grad_scale.hpp"
#include "weft/optim/options.hpp"
#include "weft/optim/optimizer.hpp"
#include "weft/optim/sgd.hpp"
#include "weft/optim/adam.hpp"
#include "weft/optim/adagrad.hpp"
#include "weft/optim/rmsprop.hpp"
#include "weft/optim/lion.hpp"
#include "weft/optim/step_lr.hpp"
#include "weft/optim/linear_lr.hpp"
#include "weft/optim/cosine_annealing_lr.hpp"
#include "weft/optim/one_cycle_lr.hpp"
#include "weft/optim/sequential_lr.hpp"

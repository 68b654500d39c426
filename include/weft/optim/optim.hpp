// SPDX-License-Identifier: MIT
/// @file weft::optim: every optimizer (one fused foreach kernel per step each).
#pragma once

#include "weft/optim/grad_scale.hpp"
#include "weft/optim/options.hpp"
#include "weft/optim/optimizer.hpp"
#include "weft/optim/sgd.hpp"
#include "weft/optim/adam.hpp"
#include "weft/optim/adagrad.hpp"
#include "weft/optim/rmsprop.hpp"
#include "weft/optim/lion.hpp"

// SPDX-License-Identifier: MIT
/// @file The autograd umbrella: weft::ad (Var, param, backward, grad, NoGrad) and every differentiable op over Vars.
#pragma once

#include "weft/weft.hpp"
#include "weft/ad/var.hpp"
#include "weft/ad/grad.hpp"
#include "weft/ad/operators.hpp"
#include "weft/ad/reduce.hpp"
#include "weft/ad/statistics.hpp"
#include "weft/ad/join.hpp"
#include "weft/ad/views.hpp"
#include "weft/ad/matmul.hpp"
#include "weft/ad/softmax.hpp"
#include "weft/ad/indexing.hpp"
#include "weft/nn/differentiable.hpp"
#include "weft/nn/conv.hpp"
#include "weft/nn/conv_transpose.hpp"
#include "weft/nn/interpolate.hpp"
#include "weft/nn/pooling.hpp"
#include "weft/nn/modules.hpp"

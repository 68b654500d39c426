// SPDX-License-Identifier: MIT
/// @file weft::nn modules (nn/modules/): Module (named parameters, buffers, state_dict), Linear, Embedding, LayerNorm, BatchNorm1d/2d, GroupNorm, RMSNorm, Dropout, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, Sequential.
#pragma once

#include "weft/nn/modules/module.hpp"
#include "weft/nn/modules/batch_norm.hpp"
#include "weft/nn/modules/conv.hpp"
#include "weft/nn/modules/dropout.hpp"
#include "weft/nn/modules/embedding.hpp"
#include "weft/nn/modules/group_norm.hpp"
#include "weft/nn/modules/inference.hpp"
#include "weft/nn/modules/layer_norm.hpp"
#include "weft/nn/modules/linear.hpp"
#include "weft/nn/modules/pooling.hpp"
#include "weft/nn/modules/rms_norm.hpp"
#include "weft/nn/modules/sequential.hpp"

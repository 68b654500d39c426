// SPDX-License-Identifier: MIT
/// @file The umbrella header: everything weft offers, in dependency order.
#pragma once

#include "weft/core/config.hpp"
#include "weft/core/dtype.hpp"
#include "weft/core/error.hpp"
#include "weft/core/shape.hpp"
#include "weft/core/device.hpp"
#include "weft/core/storage.hpp"
#include "weft/core/tensor.hpp"
#include "weft/core/tensor_list.hpp"
#include "weft/core/random.hpp"
#include "weft/log/log.hpp"
#include "weft/expr/expr.hpp"
#include "weft/expr/ops.hpp"
#include "weft/expr/nodes.hpp"
#include "weft/expr/operators.hpp"
#include "weft/expr/fuse.hpp"
#include "weft/core/factories.hpp"
#include "weft/dense/reduce.hpp"
#include "weft/dense/softmax.hpp"
#include "weft/dense/layer_norm.hpp"
#include "weft/dense/matmul.hpp"

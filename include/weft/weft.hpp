// SPDX-License-Identifier: MIT
/// @file The umbrella header: everything weft offers, in dependency order.
#pragma once

#include "weft/core/config.hpp"
// An unsupported compiler stopped at config.hpp's #error: nothing below is read, so that line
// stays the only error.
#if !WEFT_COMPILER_UNSUPPORTED
#include "weft/core/dtype.hpp"
#include "weft/core/error.hpp"
#include "weft/core/shape.hpp"
#include "weft/core/device.hpp"
#include "weft/core/storage.hpp"
#include "weft/core/tensor.hpp"
#include "weft/core/from_blob.hpp"
#include "weft/core/tensor_list.hpp"
#include "weft/core/random.hpp"
#include "weft/log/log.hpp"
#include "weft/expr/expr.hpp"
#include "weft/expr/ops.hpp"
#include "weft/expr/nodes.hpp"
#include "weft/expr/tree.hpp"
#include "weft/expr/operators.hpp"
#include "weft/dense/fuse.hpp"
#include "weft/dense/factories.hpp"
#include "weft/core/print.hpp"
#include "weft/dense/reduce.hpp"
#include "weft/dense/statistics.hpp"
#include "weft/dense/arg_reduce.hpp"
#include "weft/dense/topk.hpp"
#include "weft/dense/cumsum.hpp"
#include "weft/dense/softmax.hpp"
#include "weft/dense/layer_norm.hpp"
#include "weft/dense/matmul.hpp"
#include "weft/dense/join.hpp"
#include "weft/dense/indexing.hpp"
#include "weft/dense/foreach_norm.hpp"
#include "weft/dense/threads.hpp"
#include "weft/nn/cross_entropy.hpp"
#include "weft/nn/gelu.hpp"
#include "weft/nn/layer_norm_backward.hpp"
#include "weft/nn/sdpa.hpp"
#include "weft/nn/attention_pattern.hpp"
#include "weft/optim/optim.hpp"

#endif  // !WEFT_COMPILER_UNSUPPORTED

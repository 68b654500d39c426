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
#include "weft/expr/functors.hpp"
#include "weft/expr/nodes.hpp"
#include "weft/expr/tree.hpp"
#include "weft/expr/operators.hpp"
#include "weft/ops/fuse.hpp"
#include "weft/ops/factories.hpp"
#include "weft/core/print.hpp"
#include "weft/ops/reduce.hpp"
#include "weft/ops/statistics.hpp"
#include "weft/ops/arg_reduce.hpp"
#include "weft/ops/topk.hpp"
#include "weft/ops/sort.hpp"
#include "weft/ops/select.hpp"
#include "weft/ops/cumsum.hpp"
#include "weft/ops/softmax.hpp"
#include "weft/ops/layer_norm.hpp"
#include "weft/ops/matmul.hpp"
#include "weft/ops/join.hpp"
#include "weft/ops/indexing.hpp"
#include "weft/ops/foreach_norm.hpp"
#include "weft/backend/cpu_build.hpp"
#include "weft/backend/threads.hpp"
#include "weft/nn/cross_entropy.hpp"
#include "weft/nn/gelu.hpp"
#include "weft/nn/layer_norm_backward.hpp"
#include "weft/nn/sdpa.hpp"
#include "weft/nn/attention_pattern.hpp"
#include "weft/optim/optim.hpp"

#endif  // !WEFT_COMPILER_UNSUPPORTED

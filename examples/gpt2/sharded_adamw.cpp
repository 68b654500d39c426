// SPDX-License-Identifier: MIT
/// @file ZeRO-1's step (sharded_adamw.hpp): reduce-scatter the gradients, AdamW on this rank's shard, all-gather the
/// parameters.

#include "sharded_adamw.hpp"

#include <stdexcept>
#include <string>

namespace gpt2 {

namespace {

/// This rank's shard of a flat buffer split into group.size() equal parts.
weft::TensorView<float> shard_of(const weft::TensorView<float>& flat, const weft::dist::Group& group) {
  const std::int64_t n = flat.numel(), ranks = group.size();
  if (flat.dim() != 1 || n % ranks != 0)
    throw std::invalid_argument("ShardedAdamW: the parameter buffer has " + std::to_string(flat.dim()) +
                                " dims and " + std::to_string(n) + " elements; it must be flat (1-D) and split into " +
                                "the " + std::to_string(ranks) + " ranks of group '" + group.name() +
                                "': pad it with zeros to a multiple of " + std::to_string(ranks));
  return flat.narrow(0, group.rank() * (n / ranks), n / ranks);
}

}  // namespace

ShardedAdamW::ShardedAdamW(weft::TensorView<float> parameters, weft::dist::Group group,
                           weft::optim::AdamWOptions options)
    : parameters_(std::move(parameters)),
      group_(std::move(group)),
      gradient_shard_(weft::empty<float>({parameters_.numel() / group_.size()})),
      adamw_(weft::TensorList<float>({shard_of(parameters_, group_)}), options) {}

void ShardedAdamW::step(const weft::TensorView<float>& gradients) {
  // Zero padding at the end of the flat buffers (to a multiple of R) has zero gradients: AdamW gives it m = v = 0
  // and p = (1 - lr wd) 0 - lr 0 / (0 + eps) = 0, so it stays zero.
  weft::dist::reduce_scatter(gradient_shard_, gradients, group_, weft::dist::ReduceOp::avg);
  adamw_.step(weft::TensorList<float>({gradient_shard_.view()}));
  weft::dist::all_gather(parameters_, adamw_.params()[0], group_);
}

}  // namespace gpt2

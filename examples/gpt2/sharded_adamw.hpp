// SPDX-License-Identifier: MIT
/// @file ShardedAdamW: ZeRO-1, AdamW whose state (m and v) is split over the ranks of a process group.
#pragma once

#include <weft/dist.hpp>
#include <weft/weft.hpp>

namespace gpt2 {

/// ZeRO-1 (stage 1 of ZeRO: the optimizer state partitioned) over a flat parameter buffer of n floats, n a multiple of
/// the group's size R. Rank k owns shard k, elements [k n / R, (k + 1) n / R), and keeps m and v for it alone: 1/R
/// of the state a replicated AdamW keeps. One step, from each rank's gradients of its own rows:
///   1. reduce_scatter(avg): rank k gets shard k of the ranks' mean gradient;
///   2. AdamW on shard k of the parameters with it: the update a replicated AdamW makes there;
///   3. all_gather: every rank's parameter buffer gets every rank's updated shard.
/// A reduce-scatter and an all-gather are the two halves of an all_reduce: the same bytes on the wire as
/// data-parallel training with replicated state.
class ShardedAdamW {
 public:
  /// parameters: the flat buffer, the same length on every rank of group; their values must be equal (the same
  /// checkpoint).
  ShardedAdamW(weft::TensorView<float> parameters, weft::dist::Group group, weft::optim::AdamWOptions options);

  /// One step from this rank's flat gradients (the parameters' length).
  void step(const weft::TensorView<float>& gradients);

  /// The AdamW over this rank's shard: its options (lr for schedules) and its state.
  weft::optim::AdamW<float>& adamw() { return adamw_; }

 private:
  weft::TensorView<float> parameters_;
  weft::dist::Group group_;
  weft::Tensor<float> gradient_shard_;  // [n / R]: this rank's shard of the mean gradient
  weft::optim::AdamW<float> adamw_;     // over parameters_'s shard
};

}  // namespace gpt2

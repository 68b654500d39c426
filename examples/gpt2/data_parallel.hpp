// SPDX-License-Identifier: MIT
/// @file Data-parallel training: the ranks of `mpirun -np R` as the one dim "dp" of a device mesh, and AdamW over the
/// model's flat buffers on them, its state replicated on every rank (DDP) or sharded over the ranks (ZeRO-1).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <weft/weft.hpp>

#if WEFT_GPT2_DIST
#include <weft/dist.hpp>
#endif

#include "model.hpp"

namespace gpt2 {

#if WEFT_GPT2_DIST
class ShardedAdamW;
#endif

/// The data-parallel ranks: every rank of the job, along the one dim "dp" of a 1-D device mesh (the weft::dist
/// runtime must be running). A build without MPI (WEFT_GPT2_DIST undefined) is one rank, whose averages and gathers
/// are the values themselves.
class DataParallel {
 public:
  DataParallel();

  int rank() const;
  int size() const;
  /// Every tensor of the list := its mean over the ranks, in place: ONE bucketed all_reduce for the whole list.
  void average(const weft::TensorList<float>& xs) const;
  /// x's mean over the ranks.
  float average(float x) const;
  /// Every rank's x in rank order, on every rank.
  std::vector<std::int64_t> gather(std::int64_t x) const;
#if WEFT_GPT2_DIST
  const weft::dist::DeviceMesh& group() const { return dp_; }

 private:
  weft::dist::DeviceMesh dp_;
#endif
};

/// AdamW over a model's flat buffers on the data-parallel ranks, after each rank's backward on its own rows:
/// - replicated (DDP): the gradients are averaged over the ranks (one list all_reduce of the 16 gradient tensors) and
///   every rank updates its whole copy of the parameters with its whole copy of the state (m and v);
/// - zero1: ShardedAdamW; each rank keeps the state of its 1/R shard only.
/// Both leave every rank with the parameters one process training on the global batch would have (up to rounding:
/// the sums over rows run in another order).
class DataParallelAdamW {
 public:
  DataParallelAdamW(Model& model, const DataParallel& dp, weft::optim::AdamWOptions options, bool zero1);
  ~DataParallelAdamW();

  /// One step from the gradients of the model's last backward.
  void step();
  /// The bytes of optimizer state (m and v) this rank holds.
  std::int64_t state_bytes();

 private:
  Model& model_;
  const DataParallel& dp_;
  std::unique_ptr<weft::optim::AdamW<float>> replicated_;
#if WEFT_GPT2_DIST
  std::unique_ptr<ShardedAdamW> sharded_;
#endif
};

}  // namespace gpt2

// SPDX-License-Identifier: MIT
/// @file LinearLR: the learning rate's factor moves linearly from start_factor to end_factor over
/// total_iters epochs, then stays (torch.optim.lr_scheduler.LinearLR): the usual warmup.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "weft/optim/lr_scheduler.hpp"

namespace weft::optim {

/// lr = base_lr * (start + (end - start) * min(epoch, total_iters) / total_iters); as torch
/// computes it, from the last lr: lr *= 1 + (end - start) / (total_iters start + (epoch - 1) (end - start))
/// for 1 <= epoch <= total_iters (lr = base_lr * start at epoch 0).
template <SchedulableOptimizer Opt>
class LinearLR : public LRScheduler<Opt> {
 public:
  LinearLR(Opt& opt, double start_factor = 1.0 / 3, double end_factor = 1.0, std::int64_t total_iters = 5)
      : LRScheduler<Opt>("optim::LinearLR", opt), start_(start_factor), end_(end_factor), total_iters_(total_iters) {
    // torch's ranges; a start factor of 0 would make the chained form divide by 0 at epoch 1.
    if (!(start_factor > 0.0 && start_factor <= 1.0))
      weft::detail::fail(this->name(), "start_factor ", start_factor, " must be in (0, 1]");
    if (!(end_factor >= 0.0 && end_factor <= 1.0))
      weft::detail::fail(this->name(), "end_factor ", end_factor, " must be in [0, 1]");
    if (total_iters <= 0)
      weft::detail::fail(this->name(), "total_iters ", total_iters,
                         " must be >= 1: the number of epochs from start_factor to end_factor");
    this->initial_step();
  }

 protected:
  double chained_lr(std::size_t, double lr, std::int64_t epoch) override {
    if (epoch == 0) return lr * start_;
    if (epoch > total_iters_) return lr;
    return lr * (1.0 + (end_ - start_) / (double(total_iters_) * start_ + double(epoch - 1) * (end_ - start_)));
  }
  double closed_form_lr(std::size_t group, std::int64_t epoch) override {
    return this->base_lrs()[group] *
           (start_ + (end_ - start_) * double(std::min(total_iters_, epoch)) / double(total_iters_));
  }

 private:
  double start_, end_;
  std::int64_t total_iters_;
};

}  // namespace weft::optim

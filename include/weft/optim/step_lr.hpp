// SPDX-License-Identifier: MIT
/// @file StepLR: the learning rate times gamma every step_size epochs (torch.optim.lr_scheduler.StepLR).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "weft/optim/lr_scheduler.hpp"

namespace weft::optim {

/// lr = base_lr * gamma^floor(epoch / step_size); as torch computes it, from the last lr:
/// lr *= gamma at every epoch that is a multiple of step_size.
template <SchedulableOptimizer Opt>
class StepLR : public LRScheduler<Opt> {
 public:
  StepLR(Opt& opt, std::int64_t step_size, double gamma = 0.1)
      : LRScheduler<Opt>("optim::StepLR", opt), step_size_(step_size), gamma_(gamma) {
    if (step_size <= 0)
      weft::detail::fail(this->name(), "step_size ", step_size,
                         " must be >= 1: the lr is multiplied by gamma every step_size epochs");
    this->initial_step();
  }

 protected:
  double chained_lr(std::size_t, double lr, std::int64_t epoch) override {
    return epoch == 0 || epoch % step_size_ != 0 ? lr : lr * gamma_;
  }
  double closed_form_lr(std::size_t group, std::int64_t epoch) override {
    return this->base_lrs()[group] * std::pow(gamma_, double(epoch / step_size_));
  }

 private:
  std::int64_t step_size_;
  double gamma_;
};

}  // namespace weft::optim

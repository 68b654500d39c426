// SPDX-License-Identifier: MIT
/// @file CosineAnnealingLR: the learning rate follows half a cosine from base_lr down to eta_min
/// over T_max epochs (torch.optim.lr_scheduler.CosineAnnealingLR; SGDR without restarts).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>

#include "weft/optim/lr_scheduler.hpp"

namespace weft::optim {

/// lr = eta_min + (base_lr - eta_min) (1 + cos(pi epoch / T_max)) / 2, and past T_max the cosine
/// goes on (the lr rises again). As torch computes it, from the last lr:
///   lr = (1 + cos(pi epoch / T_max)) / (1 + cos(pi (epoch - 1) / T_max)) (lr - eta_min) + eta_min,
/// and where that denominator is 0 (epoch - 1 = T_max mod 2 T_max, the bottom):
///   lr += (base_lr - eta_min) (1 - cos(pi / T_max)) / 2.
/// The recursion drifts from the closed form by rounding only (a few ulps); torch's numbers are the
/// recursion's.
template <SchedulableOptimizer Opt>
class CosineAnnealingLR : public LRScheduler<Opt> {
 public:
  CosineAnnealingLR(Opt& opt, std::int64_t T_max, double eta_min = 0.0)
      : LRScheduler<Opt>("optim::CosineAnnealingLR", opt), t_max_(T_max), eta_min_(eta_min) {
    if (T_max <= 0)
      weft::detail::fail(this->name(), "T_max ", T_max,
                         " must be >= 1: the number of epochs from the base lr down to eta_min");
    this->initial_step();
  }

 protected:
  double chained_lr(std::size_t group, double lr, std::int64_t epoch) override {
    constexpr double pi = std::numbers::pi;
    const double t_max = double(t_max_);
    if (epoch == 0) return lr;
    if ((epoch - 1 - t_max_) % (2 * t_max_) == 0)
      return lr + (this->base_lrs()[group] - eta_min_) * (1 - std::cos(pi / t_max)) / 2;
    return (1 + std::cos(pi * double(epoch) / t_max)) / (1 + std::cos(pi * double(epoch - 1) / t_max)) *
               (lr - eta_min_) +
           eta_min_;
  }
  double closed_form_lr(std::size_t group, std::int64_t epoch) override {
    constexpr double pi = std::numbers::pi;
    return eta_min_ + (this->base_lrs()[group] - eta_min_) * (1 + std::cos(pi * double(epoch) / double(t_max_))) / 2;
  }

 private:
  std::int64_t t_max_;
  double eta_min_;
};

}  // namespace weft::optim

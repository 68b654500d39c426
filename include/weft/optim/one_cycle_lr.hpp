// SPDX-License-Identifier: MIT
/// @file OneCycleLR: the 1cycle policy (Smith and Topin 2017, "Super-Convergence"), the learning
/// rate up to max_lr and down far below where it started, the momentum the other way
/// (torch.optim.lr_scheduler.OneCycleLR).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <vector>

#include "weft/optim/lr_scheduler.hpp"

namespace weft::optim {

/// How OneCycleLR goes from one level to the next over a phase, pct from 0 to 1:
///   cos:    end + (start - end) / 2 * (1 + cos(pi pct))
///   linear: start + (end - start) pct
enum class AnnealStrategy { cos, linear };

/// OneCycleLR's options, with torch's names and defaults.
struct OneCycleLROptions {
  double pct_start = 0.3;  // the share of the steps spent raising the lr
  AnnealStrategy anneal_strategy = AnnealStrategy::cos;
  bool cycle_momentum = true;  // needs an optimizer with momentum or betas
  PerGroup base_momentum = 0.85;  // the momentum at max_lr
  PerGroup max_momentum = 0.95;   // the momentum at the lowest lrs
  double div_factor = 25.0;         // initial_lr = max_lr / div_factor
  double final_div_factor = 1e4;    // min_lr = initial_lr / final_div_factor
  // true: up, back down to initial_lr, then to min_lr (the paper's); false: up, then to min_lr (fastai's)
  bool three_phase = false;
};

/// The lr (and momentum) of step s of total_steps, by phase (torch's phases and step arithmetic):
///   two phases:   initial_lr -> max_lr over steps [0, pct_start T - 1], then -> min_lr until T - 1;
///   three phases: initial_lr -> max_lr over [0, pct_start T - 1], -> initial_lr until
///                 2 pct_start T - 2, then -> min_lr until T - 1;
/// the momentum goes max -> base -> max (and stays at max in the third phase). The lr is computed
/// from the step alone (torch's OneCycleLR is not chainable). Stepping past total_steps is an
/// error, as in torch.
template <SchedulableOptimizer Opt>
class OneCycleLR : public LRScheduler<Opt> {
 public:
  OneCycleLR(Opt& opt, const PerGroup& max_lr, std::int64_t total_steps, const OneCycleLROptions& options = {})
      : LRScheduler<Opt>("optim::OneCycleLR", opt, initial_lrs(opt, max_lr, options.div_factor)),
        total_steps_(total_steps),
        pct_start_(options.pct_start),
        anneal_(options.anneal_strategy),
        cycle_momentum_(options.cycle_momentum) {
    const char* op = this->name();
    if (total_steps <= 0) weft::detail::fail(op, "total_steps ", total_steps, " must be >= 1");
    if (!(options.pct_start >= 0.0 && options.pct_start <= 1.0))
      weft::detail::fail(op, "pct_start ", options.pct_start, " must be in [0, 1]: the share of steps raising the lr");
    if (!(options.div_factor > 0.0) || !(options.final_div_factor > 0.0))
      weft::detail::fail(op, "div_factor ", options.div_factor, " and final_div_factor ", options.final_div_factor,
                         " must be > 0: initial_lr = max_lr / div_factor, min_lr = initial_lr / final_div_factor");
    if (cycle_momentum_ && !(HasBetas<Opt> || HasMomentum<Opt>))
      weft::detail::fail(op, "cycle_momentum needs an optimizer with momentum (SGD, RMSprop) or betas (Adam, AdamW, "
                         "Lion), and this one has neither; set cycle_momentum = false");

    const std::size_t groups = this->base_lrs().size();
    const std::vector<double> max_lrs = max_lr.for_groups(groups, op, "max_lr");
    std::vector<double> base_momenta(groups), max_momenta(groups);
    if (cycle_momentum_) {
      base_momenta = options.base_momentum.for_groups(groups, op, "base_momentum");
      max_momenta = options.max_momentum.for_groups(groups, op, "max_momentum");
    }
    for (std::size_t group = 0; group < groups; ++group) {
      const double initial = this->base_lrs()[group];
      levels_.push_back({initial, max_lrs[group], initial / options.final_div_factor, max_momenta[group],
                         base_momenta[group]});
    }
    // The phase ends as torch computes them: the product rounded, then the subtraction. A
    // compiler contracting `pct_start * total_steps - 1` into one fused multiply-add would give a
    // phase that torch finds empty (pct_start * total_steps = 1) a length of 5.6e-17 steps.
    const auto rounded_product = [](double a, double b) {
      const volatile double product = a * b;
      return double(product);
    };
    const double rise_end = rounded_product(options.pct_start, double(total_steps)) - 1;
    const double last = double(total_steps - 1);
    using L = Levels;
    if (options.three_phase)
      phases_ = {{rise_end, &L::initial_lr, &L::max_lr, &L::max_momentum, &L::base_momentum},
                 {rounded_product(2 * options.pct_start, double(total_steps)) - 2, &L::max_lr, &L::initial_lr, &L::base_momentum,
                  &L::max_momentum},
                 {last, &L::initial_lr, &L::min_lr, &L::max_momentum, &L::max_momentum}};
    else
      phases_ = {{rise_end, &L::initial_lr, &L::max_lr, &L::max_momentum, &L::base_momentum},
                 {last, &L::max_lr, &L::min_lr, &L::base_momentum, &L::max_momentum}};
    this->initial_step();
  }

  std::int64_t total_steps() const { return total_steps_; }

 protected:
  double chained_lr(std::size_t group, double, std::int64_t epoch) override { return lr_at(group, epoch); }
  double closed_form_lr(std::size_t group, std::int64_t epoch) override { return lr_at(group, epoch); }

 private:
  /// One group's levels (torch keeps them in the param group under these names).
  struct Levels {
    double initial_lr, max_lr, min_lr, max_momentum, base_momentum;
  };
  /// One phase: the last step it covers, and the levels it goes from and to.
  struct Phase {
    double end_step;
    double Levels::*start_lr;
    double Levels::*end_lr;
    double Levels::*start_momentum;
    double Levels::*end_momentum;
  };

  /// torch's initial_lr of each group: max_lr / div_factor (the scheduler's base lrs).
  static std::vector<double> initial_lrs(Opt& opt, const PerGroup& max_lr, double div_factor) {
    std::vector<double> lrs = max_lr.for_groups(opt.num_param_groups(), "optim::OneCycleLR", "max_lr");
    for (double& lr : lrs) lr /= div_factor;
    return lrs;
  }

  double anneal(double start, double end, double pct) const {
    if (anneal_ == AnnealStrategy::linear) return (end - start) * pct + start;
    return end + (start - end) / 2.0 * (std::cos(std::numbers::pi * pct) + 1);
  }

  /// The lr of `group` at step `epoch`; sets its momentum (beta1) too under cycle_momentum.
  double lr_at(std::size_t group, std::int64_t epoch) {
    const char* op = this->name();
    if (epoch > total_steps_)
      weft::detail::fail(op, "step ", epoch, " is past total_steps ", total_steps_,
                         "; make total_steps the number of step() calls (or more)");
    // The first phase that has not ended by this step (the last phase takes every step after).
    std::size_t k = 0;
    double start_step = 0.0;
    while (k + 1 < phases_.size() && double(epoch) > phases_[k].end_step) start_step = phases_[k++].end_step;
    const Phase& phase = phases_[k];
    // torch divides by the phase's length too (ZeroDivisionError): pct_start * total_steps = 1
    // gives the first phase (and the second of three) no length, pct_start = 1 the last one.
    if (phase.end_step == start_step)
      weft::detail::fail(op, "step ", epoch, " falls in phase ", k + 1,
                         " of the cycle, which has no length (it starts and ends at step ", start_step,
                         ") with pct_start ", pct_start_, " and total_steps ", total_steps_,
                         "; choose another pct_start");
    const double pct = (double(epoch) - start_step) / (phase.end_step - start_step);
    const Levels& levels = levels_[group];
    if (cycle_momentum_) set_momentum(group, anneal(levels.*phase.start_momentum, levels.*phase.end_momentum, pct));
    return anneal(levels.*phase.start_lr, levels.*phase.end_lr, pct);
  }

  void set_momentum(std::size_t group, double momentum) {
    if constexpr (HasBetas<Opt>) this->optimizer().options(group).betas.first = momentum;
    else if constexpr (HasMomentum<Opt>) this->optimizer().options(group).momentum = momentum;
  }

  std::int64_t total_steps_;
  double pct_start_;
  AnnealStrategy anneal_;
  bool cycle_momentum_;
  std::vector<Levels> levels_;
  std::vector<Phase> phases_;
};

}  // namespace weft::optim

// SPDX-License-Identifier: MIT
/// @file SequentialLR: schedulers one after another, switching at milestone epochs
/// (torch.optim.lr_scheduler.SequentialLR), e.g. a LinearLR warmup, then CosineAnnealingLR.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "weft/optim/lr_scheduler.hpp"

namespace weft::optim {

/// Runs schedulers[0] until milestones[0], schedulers[1] until milestones[1], ... At a milestone
/// the next scheduler starts at its epoch 0 from its base lrs (its closed form, as torch); between
/// milestones it steps as usual, from the last lr.
///
/// It holds the schedulers by reference (they must outlive it), as torch does; they are the
/// schedulers of this optimizer. Built with them, it sets the lrs back to the first scheduler's
/// base lrs, gives these to every scheduler as its base (torch's initial_lr: the lr before the
/// first scheduler made on the optimizer changed it), rewinds them and starts the first one.
template <SchedulableOptimizer Opt>
class SequentialLR {
 public:
  SequentialLR(Opt& opt, std::vector<std::reference_wrapper<LRScheduler<Opt>>> schedulers,
               std::vector<std::int64_t> milestones)
      : schedulers_(std::move(schedulers)), milestones_(std::move(milestones)) {
    const char* op = "optim::SequentialLR";
    if (schedulers_.empty()) weft::detail::fail(op, "no schedulers; give at least one");
    for (std::size_t k = 0; k < schedulers_.size(); ++k)
      if (&schedulers_[k].get().optimizer() != &opt)
        weft::detail::fail(op, "scheduler ", k, " (", schedulers_[k].get().name(),
                           ") drives another optimizer; make every scheduler on the optimizer given to SequentialLR");
    if (milestones_.size() + 1 != schedulers_.size())
      weft::detail::fail(op, milestones_.size(), " milestones for ", schedulers_.size(),
                         " schedulers; give one milestone fewer than schedulers: the epoch each next one starts");
    for (std::size_t k = 0; k < milestones_.size(); ++k)
      if (milestones_[k] <= (k == 0 ? 0 : milestones_[k - 1]))
        weft::detail::fail(op, "milestone ", k, " is ", milestones_[k],
                           k == 0 ? ", but milestones start after epoch 0" : ", not after the one before it",
                           "; milestones must be increasing epochs >= 1");

    LRScheduler<Opt>& first = schedulers_[0].get();
    const std::vector<double> base_lrs = first.base_lrs();
    for (std::size_t group = 0; group < base_lrs.size(); ++group) opt.options(group).lr = base_lrs[group];
    for (auto& scheduler : schedulers_) scheduler.get().join_sequence(base_lrs);
    first.initial_step();
    last_lrs_ = first.get_last_lr();
  }

  /// Advances one epoch: the scheduler of this epoch steps, or starts if the epoch is its milestone.
  void step() {
    const std::int64_t epoch = last_epoch_ + 1;
    const auto after = std::upper_bound(milestones_.begin(), milestones_.end(), epoch);
    const std::size_t k = std::size_t(after - milestones_.begin());  // the milestones passed
    LRScheduler<Opt>& scheduler = schedulers_[k].get();
    if (k > 0 && milestones_[k - 1] == epoch) scheduler.restart();
    else scheduler.step();
    last_lrs_ = scheduler.get_last_lr();
    last_epoch_ = epoch;
  }

  const std::vector<double>& get_last_lr() const { return last_lrs_; }
  std::int64_t last_epoch() const { return last_epoch_; }
  const std::vector<double>& base_lrs() const { return schedulers_[0].get().base_lrs(); }

  /// Its own state and each scheduler's (as torch's, which saves the schedulers' too).
  SchedulerState state_dict() const {
    SchedulerState state{last_epoch_, base_lrs(), last_lrs_, {}};
    for (const auto& scheduler : schedulers_) state.schedulers.push_back(scheduler.get().state_dict());
    return state;
  }
  void load_state_dict(const SchedulerState& state) {
    if (state.schedulers.size() != schedulers_.size() || state.last_lrs.size() != last_lrs_.size())
      weft::detail::fail("optim::SequentialLR", "the state has ", state.schedulers.size(), " schedulers and ",
                         state.last_lrs.size(), " last lrs, but this SequentialLR has ", schedulers_.size(), " and ",
                         last_lrs_.size(), "; load a state of the same sequence");
    for (std::size_t k = 0; k < schedulers_.size(); ++k) schedulers_[k].get().load_state_dict(state.schedulers[k]);
    last_epoch_ = state.last_epoch;
    last_lrs_ = state.last_lrs;
  }

 private:
  std::vector<std::reference_wrapper<LRScheduler<Opt>>> schedulers_;
  std::vector<std::int64_t> milestones_;
  std::vector<double> last_lrs_;
  std::int64_t last_epoch_ = 0;
};

}  // namespace weft::optim

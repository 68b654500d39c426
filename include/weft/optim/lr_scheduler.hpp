// SPDX-License-Identifier: MIT
/// @file LRScheduler, the base of weft's learning-rate schedulers (torch.optim.lr_scheduler): the
/// epoch count, the base and last learning rates, and how a scheduler sets an optimizer's groups.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "weft/core/error.hpp"

namespace weft::optim {

/// An optimizer a scheduler drives: parameter groups whose options have an `lr` to set.
template <class Opt>
concept SchedulableOptimizer = requires(Opt& opt, std::size_t group) {
  { opt.num_param_groups() } -> std::convertible_to<std::size_t>;
  { opt.options(group).lr } -> std::same_as<double&>;
};

/// The momentum OneCycleLR cycles (torch's cycle_momentum): `betas.first` (beta1: Adam, AdamW,
/// Lion) where the options have betas, else `momentum` (SGD, RMSprop).
template <class Opt>
concept HasBetas = requires(Opt& opt, std::size_t group) {
  { opt.options(group).betas.first } -> std::same_as<double&>;
};
template <class Opt>
concept HasMomentum = requires(Opt& opt, std::size_t group) {
  { opt.options(group).momentum } -> std::same_as<double&>;
};

/// A number for each parameter group: one for all of them (`0.1`), or a list of one per group
/// (`{0.1, 0.01}`), as torch takes max_lr and the momenta.
struct PerGroup {
  std::vector<double> values;
  bool one_for_all = false;

  PerGroup(double value) : values{value}, one_for_all(true) {}  // NOLINT: a number is one for all
  PerGroup(std::initializer_list<double> list) : values(list) {}
  PerGroup(std::vector<double> list) : values(std::move(list)) {}

  /// The value of each of `groups` groups; a list of another length is an error of `op` naming `what`.
  std::vector<double> for_groups(std::size_t groups, const char* op, const char* what) const {
    if (one_for_all) return std::vector<double>(groups, values[0]);
    if (values.size() != groups)
      weft::detail::fail(op, what, " has ", values.size(), " values for ", groups,
                         " parameter groups; give one number for all groups, or one per group");
    return values;
  }
};

/// What a scheduler saves in a checkpoint (torch's state_dict: last_epoch, base_lrs, _last_lr;
/// SequentialLR adds its schedulers'). The optimizer's lrs come back with the optimizer's own state.
struct SchedulerState {
  std::int64_t last_epoch = 0;
  std::vector<double> base_lrs;
  std::vector<double> last_lrs;
  std::vector<SchedulerState> schedulers;
};

template <SchedulableOptimizer Opt>
class SequentialLR;

/// The base of the schedulers (torch's LRScheduler). A scheduler sets each parameter group's lr
/// at construction (epoch 0: torch's initial step) and at every step(); like torch, it computes
/// the new lr from the group's current lr (the chainable form), so that an lr changed in between
/// carries on, and its values are torch's to the last bits.
template <SchedulableOptimizer Opt>
class LRScheduler {
 public:
  virtual ~LRScheduler() = default;

  /// Advances one epoch: last_epoch() + 1, and every group's lr for it.
  void step() {
    const std::int64_t epoch = last_epoch_ + 1;
    set_lrs(epoch, [&](std::size_t group, double lr) { return chained_lr(group, lr, epoch); });
  }

  /// The lr of each parameter group that the last step (or the construction) set.
  const std::vector<double>& get_last_lr() const { return last_lrs_; }
  /// Steps taken since construction (0 after it); -1 for a scheduler SequentialLR has not reached.
  std::int64_t last_epoch() const { return last_epoch_; }
  /// The lr each group started from (torch's base_lrs: the group's initial_lr).
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  Opt& optimizer() const { return *opt_; }
  const char* name() const { return name_; }

  SchedulerState state_dict() const { return {last_epoch_, base_lrs_, last_lrs_, {}}; }
  /// Restores a state_dict() of a scheduler of this kind on an optimizer with as many groups.
  void load_state_dict(const SchedulerState& state) {
    if (state.base_lrs.size() != base_lrs_.size() || state.last_lrs.size() != base_lrs_.size() ||
        !state.schedulers.empty())
      weft::detail::fail(name_, "the state has ", state.base_lrs.size(), " base lrs, ", state.last_lrs.size(),
                         " last lrs and ", state.schedulers.size(), " schedulers, but this scheduler has ",
                         base_lrs_.size(), " parameter groups and no schedulers; load a state of the same scheduler");
    last_epoch_ = state.last_epoch;
    base_lrs_ = state.base_lrs;
    last_lrs_ = state.last_lrs;
  }

 protected:
  /// Starts from the groups' current lrs.
  LRScheduler(const char* name, Opt& opt) : LRScheduler(name, opt, current_lrs(opt)) {}
  /// Starts from `base_lrs` (OneCycleLR's max_lr / div_factor).
  LRScheduler(const char* name, Opt& opt, std::vector<double> base_lrs)
      : name_(name), opt_(&opt), base_lrs_(std::move(base_lrs)) {}

  /// Epoch 0's lrs (torch's initial step); each scheduler's constructor calls it last, once its
  /// own members are set.
  void initial_step() {
    set_lrs(0, [&](std::size_t group, double lr) { return chained_lr(group, lr, 0); });
  }

  /// The lr of `group` at `epoch` from its lr at the epoch before (torch's get_lr).
  virtual double chained_lr(std::size_t group, double lr, std::int64_t epoch) = 0;
  /// The lr of `group` at `epoch` from its base lr alone (torch's _get_closed_form_lr, or get_lr
  /// where torch has none): what SequentialLR sets when it switches to this scheduler (epoch 0).
  virtual double closed_form_lr(std::size_t group, std::int64_t epoch) = 0;

 private:
  friend class SequentialLR<Opt>;

  static std::vector<double> current_lrs(Opt& opt) {
    std::vector<double> lrs(opt.num_param_groups());
    for (std::size_t group = 0; group < lrs.size(); ++group) lrs[group] = opt.options(group).lr;
    return lrs;
  }

  /// Switches to epoch 0 with the closed form (torch's _update_lr(0), SequentialLR's milestones).
  void restart() {
    set_lrs(0, [&](std::size_t group, double) { return closed_form_lr(group, 0); });
  }
  /// SequentialLR gives its schedulers the lrs of its first (torch's initial_lr, which the
  /// first scheduler built on an optimizer records for all later ones) and rewinds them.
  void join_sequence(const std::vector<double>& base_lrs) {
    base_lrs_ = base_lrs;
    last_epoch_ = -1;
  }

  /// Every group's lr at `epoch` from lr_of(group, current lr), all computed before any is set:
  /// a scheduler that fails leaves the optimizer and itself as they were.
  template <class LrOf>
  void set_lrs(std::int64_t epoch, LrOf lr_of) {
    const std::size_t groups = opt_->num_param_groups();
    if (groups != base_lrs_.size())
      weft::detail::fail(name_, "the optimizer has ", groups, " parameter groups, but had ", base_lrs_.size(),
                         " when this scheduler was made; make the scheduler after the last group is added");
    std::vector<double> lrs(groups);
    for (std::size_t group = 0; group < groups; ++group) lrs[group] = lr_of(group, opt_->options(group).lr);
    for (std::size_t group = 0; group < groups; ++group) opt_->options(group).lr = lrs[group];
    last_lrs_ = std::move(lrs);
    last_epoch_ = epoch;
  }

  const char* name_;
  Opt* opt_;
  std::vector<double> base_lrs_;
  std::vector<double> last_lrs_;
  std::int64_t last_epoch_ = -1;
};

}  // namespace weft::optim

// SPDX-License-Identifier: MIT
/// @file cpu: the learning-rate schedulers against torch.optim.lr_scheduler (tests/golden/optim/schedulers.txt,
/// written by tests/golden/make_scheduler_golden.py): every group's lr, and OneCycleLR's momentum, at every
/// epoch to 1e-12 relative, on parameter groups of several lrs and on optim::SGD and optim::AdamW; bad arguments;
/// state_dict.
#include <weft/optim/optim.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "error_check.hpp"

using namespace weft_test;
using weft::Shape;
using weft::TensorList;
namespace optim = weft::optim;

namespace {

/// One configuration of the golden file: the optimizer torch ran, its groups' lrs, and per epoch
/// (0 = after construction) each group's lr and, for OneCycleLR, momentum.
struct GoldenSchedule {
  std::string optimizer;
  std::vector<double> group_lrs;
  std::vector<std::vector<double>> lr, momentum;
};

std::vector<double> read_numbers(std::istringstream& in) {
  std::vector<double> values;
  for (std::string word; in >> word && word != "momentum";) values.push_back(std::stod(word));
  return values;
}

const std::map<std::string, GoldenSchedule>& goldens() {
  static const std::map<std::string, GoldenSchedule> all = [] {
    const std::string path = std::string(WEFT_GOLDEN_DIR) + "/optim/schedulers.txt";
    std::ifstream file(path);
    REQUIRE_MESSAGE(file.good(), "cannot open " << path << " (run tests/golden/make_scheduler_golden.py)");
    std::map<std::string, GoldenSchedule> parsed;
    GoldenSchedule* current = nullptr;
    for (std::string line; std::getline(file, line);) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream in(line);
      std::string first, word;
      in >> first;
      if (first == "config") {
        std::string name;
        int steps = 0;
        in >> name;
        current = &parsed[name];
        in >> current->optimizer >> steps;
        current->group_lrs = read_numbers(in);
        continue;
      }
      REQUIRE(current != nullptr);
      REQUIRE(std::stoul(first) == current->lr.size());
      in >> word;  // "lr"
      current->lr.push_back(read_numbers(in));  // stops after the word "momentum" when there is one
      if (line.find(" momentum ") != std::string::npos) current->momentum.push_back(read_numbers(in));
    }
    return parsed;
  }();
  return all;
}

/// Parameter groups without parameters: what a scheduler reads and sets, with the several groups
/// that weft's optimizers do not have yet.
template <class Options>
struct GroupOptions {
  std::vector<Options> groups;
  std::size_t num_param_groups() const { return groups.size(); }
  Options& options(std::size_t group) { return groups.at(group); }
};

template <class Options>
GroupOptions<Options> groups_with_lrs(const std::vector<double>& lrs) {
  GroupOptions<Options> opt;
  for (double lr : lrs) {
    Options o{};
    o.lr = lr;
    opt.groups.push_back(o);
  }
  return opt;
}

/// The momentum OneCycleLR cycles: beta1 where the options have betas.
template <class Opt>
double momentum_of(Opt& opt, std::size_t group) {
  if constexpr (optim::HasBetas<Opt>) return opt.options(group).betas.first;
  else return opt.options(group).momentum;
}

void check_per_group(const std::vector<double>& got, const std::vector<double>& want, const char* what) {
  REQUIRE(got.size() == want.size());
  for (std::size_t group = 0; group < want.size(); ++group) {
    INFO(what, " of group ", group, ": ", got[group], " vs torch's ", want[group]);
    CHECK(std::abs(got[group] - want[group]) <= 1e-12 * std::abs(want[group]));
  }
}

/// Steps `scheduler` through the golden's epochs; every lr it reports and sets, and the momentum,
/// must be torch's.
template <class Opt, class Scheduler>
void check_schedule(const GoldenSchedule& golden, Opt& opt, Scheduler& scheduler) {
  for (std::size_t epoch = 0; epoch < golden.lr.size(); ++epoch) {
    CAPTURE(epoch);
    if (epoch > 0) scheduler.step();
    CHECK(scheduler.last_epoch() == std::int64_t(epoch));
    check_per_group(scheduler.get_last_lr(), golden.lr[epoch], "lr");
    for (std::size_t group = 0; group < golden.group_lrs.size(); ++group)
      CHECK(opt.options(group).lr == scheduler.get_last_lr()[group]);
    if constexpr (optim::HasBetas<Opt> || optim::HasMomentum<Opt>) {
      if (!golden.momentum.empty()) {
        std::vector<double> momenta;
        for (std::size_t group = 0; group < golden.group_lrs.size(); ++group)
          momenta.push_back(momentum_of(opt, group));
        check_per_group(momenta, golden.momentum[epoch], "momentum");
      }
    } else {
      CHECK(golden.momentum.empty());
    }
  }
}

/// Builds configuration `name` of make_scheduler_golden.py on `opt` and checks it against torch's numbers.
template <class Opt>
void check_configuration(const std::string& name, Opt& opt) {
  CAPTURE(name);
  const GoldenSchedule& golden = goldens().at(name);
  auto check = [&](auto& scheduler) { check_schedule(golden, opt, scheduler); };
  if (name == "step_lr") {
    optim::StepLR s(opt, 3, 0.5);
    check(s);
  } else if (name == "step_lr_groups") {
    optim::StepLR s(opt, 4, 0.1);
    check(s);
  } else if (name == "step_lr_every_epoch") {
    optim::StepLR s(opt, 1, 1.05);
    check(s);
  } else if (name == "linear_lr_warmup") {
    optim::LinearLR s(opt, 0.25, 1.0, 8);
    check(s);
  } else if (name == "linear_lr_decay_groups") {
    optim::LinearLR s(opt, 1.0, 0.1, 10);
    check(s);
  } else if (name == "cosine") {
    optim::CosineAnnealingLR s(opt, 10);
    check(s);
  } else if (name == "cosine_eta_min_groups") {
    optim::CosineAnnealingLR s(opt, 7, 1e-3);
    check(s);
  } else if (name == "cosine_t_max_1") {
    optim::CosineAnnealingLR s(opt, 1, 0.01);
    check(s);
  } else if (name == "one_cycle") {
    optim::OneCycleLR s(opt, 0.1, 20);
    check(s);
  } else if (name == "one_cycle_linear_adamw") {
    optim::OneCycleLR s(opt, 0.01, 16, {.pct_start = 0.25, .anneal_strategy = optim::AnnealStrategy::linear});
    check(s);
  } else if (name == "one_cycle_three_phase_groups") {
    optim::OneCycleLR s(opt, {0.1, 0.05}, 30, {.div_factor = 10.0, .final_div_factor = 100.0, .three_phase = true});
    check(s);
  } else if (name == "one_cycle_three_phase_linear_momenta") {
    optim::OneCycleLR s(opt, 0.02, 25,
                        {.pct_start = 0.4,
                         .anneal_strategy = optim::AnnealStrategy::linear,
                         .base_momentum = {0.8, 0.85},
                         .max_momentum = {0.9, 0.99},
                         .three_phase = true});
    check(s);
  } else if (name == "one_cycle_no_momentum") {
    optim::OneCycleLR s(opt, 0.3, 12, {.cycle_momentum = false});
    check(s);
  } else if (name == "sequential_linear_cosine") {
    optim::LinearLR warmup(opt, 0.1, 1.0, 5);
    optim::CosineAnnealingLR cosine(opt, 15, 1e-4);
    optim::SequentialLR s(opt, {warmup, cosine}, {5});
    check(s);
  } else if (name == "sequential_step_linear_cosine_groups") {
    optim::StepLR steps(opt, 2, 0.5);
    optim::LinearLR linear(opt, 0.5, 1.0, 4);
    optim::CosineAnnealingLR cosine(opt, 6);
    optim::SequentialLR s(opt, {steps, linear, cosine}, {4, 9});
    check(s);
  } else if (name == "sequential_one_cycle_cosine") {
    optim::OneCycleLR one_cycle(opt, 0.2, 10);
    optim::CosineAnnealingLR cosine(opt, 5);
    optim::SequentialLR s(opt, {one_cycle, cosine}, {10});
    check(s);
  } else {
    FAIL("no C++ configuration for the golden ", name, ": add it to check_configuration");
  }
}

/// One float64 parameter, for the real optimizers.
TensorList<double> one_parameter() {
  TensorList<double> params;
  params.push_back(weft::zeros<double>(Shape{2}));
  return params;
}

/// One group of one float64 parameter per lr, for the real optimizers.
template <class Options>
std::vector<optim::ParamGroup<double, Options>> parameter_groups(const std::vector<double>& lrs) {
  std::vector<optim::ParamGroup<double, Options>> groups;
  for (double lr : lrs) {
    Options o{};
    o.lr = lr;
    groups.push_back({one_parameter(), o});
  }
  return groups;
}

}  // namespace

TEST_SUITE("cpu") {
// Every golden configuration on parameter groups (one or two, with different lrs) of the options torch's optimizer had.
TEST_CASE("schedulers: lr (and OneCycleLR's momentum) at every epoch match torch.optim.lr_scheduler") {
  REQUIRE(goldens().size() == 16);
  for (const auto& [name, golden] : goldens()) {
    if (golden.optimizer == "sgd") {
      auto opt = groups_with_lrs<optim::SGDOptions>(golden.group_lrs);
      check_configuration(name, opt);
    } else if (golden.optimizer == "adamw") {
      auto opt = groups_with_lrs<optim::AdamWOptions>(golden.group_lrs);
      check_configuration(name, opt);
    } else {
      REQUIRE(golden.optimizer == "adagrad");
      auto opt = groups_with_lrs<optim::AdagradOptions>(golden.group_lrs);
      check_configuration(name, opt);
    }
  }
}

// The configurations on weft's optimizers (one or two parameter groups): the lr and momentum (beta1) a step uses.
TEST_CASE("schedulers: drive optim::SGD and optim::AdamW as torch's drive theirs") {
  int checked = 0;
  for (const auto& [name, golden] : goldens()) {
    if (golden.optimizer == "sgd") {
      optim::SGD<double> sgd(parameter_groups<optim::SGDOptions>(golden.group_lrs));
      check_configuration(name, sgd);
      ++checked;
    } else if (golden.optimizer == "adamw") {
      optim::AdamW<double> adamw(parameter_groups<optim::AdamWOptions>(golden.group_lrs));
      check_configuration(name, adamw);
      ++checked;
    }
  }
  CHECK(checked == 15);
}

// A step between scheduler steps uses the lr the scheduler set (nothing is cached in the optimizer).
TEST_CASE("schedulers: an optimizer step uses the scheduled lr") {
  TensorList<double> params = one_parameter(), grads = one_parameter();
  grads = 1.0;
  optim::SGD<double> sgd(params, {.lr = 0.1});
  optim::StepLR sched(sgd, 1, 0.5);
  double expected = 0.0;
  for (int epoch = 0; epoch < 4; ++epoch) {
    sgd.step(grads);
    expected -= sched.get_last_lr()[0];  // p -= lr * 1
    sched.step();
  }
  CHECK(params[0].to_vector()[0] == expected);
  CHECK(expected == -(0.1 + 0.05 + 0.025 + 0.0125));
}

// torch's chainable form: the next lr comes from the current one, so an lr set in between carries on.
TEST_CASE("schedulers: an lr set between steps carries on, as in torch") {
  auto opt = groups_with_lrs<optim::SGDOptions>({0.1});
  optim::StepLR sched(opt, 2, 0.5);
  sched.step();
  opt.options(0).lr = 1.0;
  sched.step();  // epoch 2: lr * gamma
  CHECK(sched.get_last_lr()[0] == 0.5);
  CHECK(sched.base_lrs()[0] == 0.1);
}

TEST_CASE("schedulers: bad arguments throw weft::Error naming the scheduler, the values and the fix") {
  auto sgd = groups_with_lrs<optim::SGDOptions>({0.1, 0.01});
  auto adagrad = groups_with_lrs<optim::AdagradOptions>({0.1});
  auto check_has = [](const std::string& text, const char* part) {
    INFO(text);
    CHECK(has(text, part));
  };
  check_has(error_of([&] { optim::StepLR s(sgd, 0); }), "optim::StepLR: step_size 0 must be >= 1");
  check_has(error_of([&] { optim::LinearLR s(sgd, 0.0); }), "optim::LinearLR: start_factor 0 must be in (0, 1]");
  check_has(error_of([&] { optim::LinearLR s(sgd, 0.5, 1.5); }), "end_factor 1.5 must be in [0, 1]");
  check_has(error_of([&] { optim::LinearLR s(sgd, 0.5, 1.0, 0); }), "total_iters 0 must be >= 1");
  check_has(error_of([&] { optim::CosineAnnealingLR s(sgd, 0); }), "optim::CosineAnnealingLR: T_max 0 must be >= 1");
  check_has(error_of([&] { optim::CosineAnnealingLR s(sgd, -3); }), "T_max -3 must be >= 1");
  check_has(error_of([&] { optim::OneCycleLR s(sgd, 0.1, 0); }), "optim::OneCycleLR: total_steps 0 must be >= 1");
  check_has(error_of([&] { optim::OneCycleLR s(sgd, 0.1, 10, {.pct_start = 1.5}); }),
            "pct_start 1.5 must be in [0, 1]");
  check_has(error_of([&] { optim::OneCycleLR s(sgd, {0.1, 0.2, 0.3}, 10); }),
            "max_lr has 3 values for 2 parameter groups; give one number for all groups, or one per group");
  check_has(error_of([&] { optim::OneCycleLR s(sgd, 0.1, 10, {.max_momentum = {0.9}}); }), "max_momentum has 1 values");
  check_has(error_of([&] { optim::OneCycleLR s(sgd, 0.1, 10, {.div_factor = 0.0}); }),
            "div_factor 0 and final_div_factor");
  check_has(error_of([&] { optim::OneCycleLR s(adagrad, 0.1, 10); }),
            "cycle_momentum needs an optimizer with momentum (SGD, RMSprop) or betas");
  // torch divides by the first phase's length, 0 when pct_start * total_steps = 1.
  check_has(error_of([&] { optim::OneCycleLR s(sgd, 0.1, 10, {.pct_start = 0.1}); }),
            "step 0 falls in phase 1 of the cycle, which has no length");

  // OneCycleLR steps total_steps times (the last one past the cycle's end, as torch allows), not more;
  // the failed step changes nothing.
  optim::OneCycleLR one_cycle(sgd, 0.1, 4);
  for (int k = 0; k < 4; ++k) one_cycle.step();
  const std::vector<double> lrs = one_cycle.get_last_lr();
  const double momentum = sgd.options(0).momentum;
  check_has(error_of([&] { one_cycle.step(); }),
            "optim::OneCycleLR: step 5 is past total_steps 4; make total_steps the number of step() calls (or more)");
  CHECK(one_cycle.last_epoch() == 4);
  CHECK(one_cycle.get_last_lr() == lrs);
  CHECK(sgd.options(0).lr == lrs[0]);
  CHECK(sgd.options(0).momentum == momentum);

  optim::StepLR a(sgd, 2);
  optim::CosineAnnealingLR b(sgd, 5);
  auto other = groups_with_lrs<optim::SGDOptions>({0.1, 0.01});
  optim::StepLR elsewhere(other, 2);
  check_has(error_of([&] { optim::SequentialLR<decltype(sgd)> s(sgd, {}, {}); }),
            "optim::SequentialLR: no schedulers; give at least one");
  check_has(error_of([&] { optim::SequentialLR s(sgd, {a, b}, {}); }),
            "0 milestones for 2 schedulers; give one milestone fewer than schedulers");
  check_has(error_of([&] { optim::SequentialLR s(sgd, {a, b}, {3, 5}); }), "2 milestones for 2 schedulers");
  check_has(error_of([&] { optim::SequentialLR s(sgd, {a, b, a}, {4, 4}); }),
            "milestone 1 is 4, not after the one before it; milestones must be increasing epochs >= 1");
  check_has(error_of([&] { optim::SequentialLR s(sgd, {a, b}, {0}); }),
            "milestone 0 is 0, but milestones start after epoch 0");
  check_has(error_of([&] { optim::SequentialLR s(sgd, {a, elsewhere}, {3}); }),
            "scheduler 1 (optim::StepLR) drives another optimizer");
}

// state_dict / load_state_dict: a scheduler built again and loaded continues as the original.
TEST_CASE("schedulers: state_dict and load_state_dict resume the schedule") {
  auto run = groups_with_lrs<optim::AdamWOptions>({0.01});
  optim::LinearLR warmup(run, 0.1, 1.0, 5);
  optim::CosineAnnealingLR cosine(run, 15, 1e-4);
  optim::SequentialLR sched(run, {warmup, cosine}, {5});
  for (int k = 0; k < 8; ++k) sched.step();
  const optim::SchedulerState saved = sched.state_dict();
  CHECK(saved.last_epoch == 8);
  CHECK(saved.schedulers.size() == 2);
  CHECK(saved.schedulers[1].last_epoch == 3);

  auto resumed = groups_with_lrs<optim::AdamWOptions>({0.01});
  optim::LinearLR warmup2(resumed, 0.1, 1.0, 5);
  optim::CosineAnnealingLR cosine2(resumed, 15, 1e-4);
  optim::SequentialLR sched2(resumed, {warmup2, cosine2}, {5});
  sched2.load_state_dict(saved);
  resumed.options(0).lr = run.options(0).lr;  // the optimizer's own state brings its lr back, as in torch
  CHECK(sched2.get_last_lr() == sched.get_last_lr());
  for (int k = 0; k < 10; ++k) {
    sched.step();
    sched2.step();
    CHECK(sched2.get_last_lr() == sched.get_last_lr());
  }
  CHECK(has(error_of([&] { warmup2.load_state_dict(saved); }),
            "optim::LinearLR: the state has 1 base lrs, 1 last lrs and 2 schedulers"));
}
}

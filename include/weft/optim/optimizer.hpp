// SPDX-License-Identifier: MIT
/// @file The optimizer base: parameter groups (tensors or ad::Vars) and state lists, the step
/// count, unscaling and skipping (GradScale), float32 master weights, state dicts, input checks and
/// the `optim` log. An optimizer adds only its update, written as foreach expressions over a
/// StepContext (see sgd.hpp, adam.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstddef>
#include <deque>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/ops/factories.hpp"
#include "weft/core/tensor_list.hpp"
#include "weft/ops/fuse.hpp"
#include "weft/log/log.hpp"
#include "weft/optim/grad_scale.hpp"
#include "weft/optim/param_group.hpp"
#include "weft/optim/state_dict.hpp"

namespace weft::optim {
inline namespace WEFT_BACKEND_ABI {

/// Numbers that depend on the step count t (bias corrections), for update()s: with t on the host
/// (a double: CPU parameters) they are computed once per step in double; with t on the device
/// (CUDA parameters) they are expressions of t that the kernel evaluates per element: a few flops
/// against ~28 bytes moved, and no host round trip.
inline double step_pow(double base, double t) { return std::pow(base, t); }
template <Expression T>
auto step_pow(double base, const T& t) {
  return weft::pow(base, t);
}
inline double step_sqrt(double x) { return std::sqrt(x); }
template <Expression X>
auto step_sqrt(const X& x) {
  return weft::sqrt(x);
}

namespace detail {

using weft::detail::cat;
using weft::detail::fail;
using weft::detail::ForeachBackends;

/// One state list and the value it gets in this step's kernel.
template <class S, class E>
struct StateWrite {
  TensorList<S>* dst;
  E value;
};

/// How a step's kernel runs. The step count on the host (CPU parameters) compiles the CPU's
/// executor only, the count on the device (CUDA parameters) the CUDA one only: each update
/// compiles one executor per path, not two (ForeachBackends). The tests run the device path on the
/// CPU with RunOnCpu (DeviceStep below), where there is no GPU.
/// Each counts its writes in the outputs' Storage versions, as weft::fuse does (autograd checks
/// them: a parameter the tape saved and a step then wrote makes that backward throw).
struct RunOnCpu {
  template <class... Stmts>
  static void run(const char* op, Stmts&... stmts) {
    weft::detail::run_foreach_statements<ForeachBackends::cpu_only>(op, stmts...);
    (weft::detail::count_write(stmts), ...);
  }
};
struct RunOnCuda {
  template <class... Stmts>
  static void run(const char* op, Stmts&... stmts) {
    weft::detail::run_foreach_statements<ForeachBackends::cuda_only>(op, stmts...);
    (weft::detail::count_write(stmts), ...);
  }
};

/// What an optimizer's update() sees for one group in one step: options() (the group's),
/// param() (the values to update: the parameters, or their float32 master copies), grad
/// (unscaled, negated under maximize), t (this step's number, from 1) and apply(), which writes
/// the new parameters and state in ONE kernel (run by Run).
template <class P, class S, class Options, class Read, class Grad, class Step, class Skip, class Run>
struct StepContext {
  static constexpr bool kMaster = !std::is_same_v<Read, TensorList<P>>;
  static constexpr bool kSkips = !std::is_same_v<Skip, std::nullptr_t>;

  const char* op;
  const Options* group_options;
  TensorList<P>* params;
  Read* read;  // params, or the master copies
  Grad grad;
  Step t;
  Skip skip;  // found_inf != 0 (an expression) when the step may be skipped on the device

  const Options& options() const { return *group_options; }
  const Read& param() const { return *read; }

  /// dst gets value in this step's kernel.
  template <class E>
  static StateWrite<S, weft::detail::expr_t<E>> write(TensorList<S>& dst, const E& value) {
    return {&dst, weft::detail::as_expr(value)};
  }

  /// Runs the step: parameters (and master copies) = p_new, every state list = its value, all
  /// in one kernel reading the values from before the step. Under a skip every output keeps its
  /// value: where(found_inf != 0, old, new), decided per element on the device.
  template <class PNew, class... W>
  void apply(const PNew& p_new, const W&... writes) const {
    auto keep = [&](auto& dst, const auto& value) {
      if constexpr (kSkips) return weft::where(skip, dst, value);
      else return weft::detail::as_expr(value);
    };
    auto state = [&](const auto& w) { return weft::assign(*w.dst, keep(*w.dst, w.value)); };
    auto run = [this](auto... statements) { Run::run(op, statements...); };
    if constexpr (kMaster) {
      auto p1 = keep(*read, p_new);  // one value: the master copy and the rounded parameter
      run(weft::assign(*read, p1), weft::assign(*params, weft::cast<P>(p1)), state(writes)...);
    } else {
      run(weft::assign(*params, keep(*params, p_new)), state(writes)...);
    }
  }
};

/// The step with the count on the device, reached by tests on CPU tensors (DeviceStep<RunOnCpu>):
/// the kernel step() runs for CUDA parameters, on another executor.
template <class Run>
struct DeviceStep {
  template <class Opt>
  static void step(Opt& opt, const TensorList<typename Opt::param_type>& grads, const GradScale* scale) {
    opt.template run_device_step<Run>(grads, scale);
  }
};

/// Options every optimizer checks the same way.
/// One option's name and value, for the checks.
struct NamedOption {
  const char* name;
  double value;
};
/// Every option given must be >= 0 (a NaN is not).
inline void check_nonnegative(const char* op, std::initializer_list<NamedOption> options) {
  for (const NamedOption& o : options)
    if (!(o.value >= 0.0)) fail(op, "invalid ", o.name, " ", o.value, ": it must be >= 0");
}
inline void check_beta(const char* op, const char* name, double value) {
  if (!(value >= 0.0 && value < 1.0)) fail(op, "invalid ", name, " ", value, ": it must be in [0, 1)");
}

}  // namespace detail

/// A state list an optimizer declares: its name (PyTorch's) and the value it starts from.
struct StateSpec {
  const char* name;
  double init = 0.0;
};

/// The base of weft's optimizers (CRTP). The parameters come in groups (torch's param_groups),
/// each with its own Options: a struct with PyTorch's names that the base holds (`options(g)`)
/// and reads `maximize` and `master_weights` from. Derived provides
/// `static void check_options(const Options&)`, `static std::vector<StateSpec>
/// state_specs(const Options&)` (the state lists these options use: what `state(name)` and
/// `load_state_dict` accept before the first step; optional) and `template <class Ctx> void
/// update(const Ctx&)`: one group's update as foreach expressions over ctx.param() and ctx.grad
/// with ctx.options(), ending in ctx.apply(new_params, Ctx::write(state, value)...).
///
/// P is the parameters' dtype, S the state's (float32 for 16-bit and float32 parameters, or
/// float64). One optimizer updates one device and dtype: every step is one kernel per group over
/// all its tensors, plus, when the step count lives on the device, a one-element kernel that
/// counts it.
template <class Derived, Element P, class S, class Options>
class Optimizer {
  static_assert(std::is_same_v<P, float> || std::is_same_v<P, double> || weft::is_16bit_float_v<P>,
                "weft::optim: parameters must be float, double, weft::half or weft::bfloat16");
  static_assert(std::is_same_v<S, float> || std::is_same_v<S, double>,
                "weft::optim: optimizer state must be float (float32) or double (float64)");
  static_assert(sizeof(S) >= sizeof(P), "weft::optim: the state type must be at least as wide as the parameters");

 public:
  using param_type = P;
  using state_type = S;
  using options_type = Options;

  /// The hyperparameters, by mutable reference for schedules; checked again at every step.
  /// options() is group 0's (torch's param_groups[0]).
  Options& options() { return options(0); }
  const Options& options() const { return options(0); }
  /// The parameter groups (torch's param_groups): each has its own options and steps as one kernel.
  std::size_t num_param_groups() const { return groups_.size(); }
  Options& options(std::size_t group) { return groups_[checked_group(group)].options; }
  const Options& options(std::size_t group) const { return groups_[checked_group(group)].options; }

  /// One step with each parameter's grad() (parameters given as ad::Vars), read now: a gradient
  /// tensor replaced since the last step is the one this step reads.
  void step() { run_step(leaf_grads("step()"), nullptr); }
  /// One step with loss-scaled grad()s: unscaled in the kernel, skipped when scale.found_inf != 0.
  void step(const GradScale& scale) { run_step(leaf_grads("step(scale)"), &scale); }
  /// One step with these gradients (one per parameter, in the order of the groups, same shapes
  /// and device as the parameters).
  void step(const TensorList<P>& grads) { run_step(grads, nullptr); }
  /// One step with loss-scaled gradients: unscaled in the kernel, skipped when scale.found_inf != 0.
  void step(const TensorList<P>& grads, const GradScale& scale) { run_step(grads, &scale); }

  /// Fills every parameter's grad() (ad::Vars) with 0, in one kernel. The buffers are kept (torch's
  /// zero_grad(set_to_none=False)): a backward accumulates into them in place, and the next
  /// step reads zeros for a parameter no backward reached.
  void zero_grad() {
    TensorList<P> grads;
    for (std::size_t k = 0; k < vars_.size(); ++k) {
      const ad::Var<P>& v = leaf("zero_grad()", k);
      if (v.node()->grad.defined()) grads.push_back(v.node()->grad.view());  // a grad not made yet is zeros
    }
    if (!grads.empty()) grads = P(0.0f);
  }

  /// Every parameter, in the order of the groups.
  const TensorList<P>& params() const { return params_; }

  /// Steps taken (skipped steps do not count). Reading it after a device-side step copies one
  /// number from the device, which waits for the step to finish.
  std::int64_t step_count() const { return device_step_.defined() ? std::int64_t(device_step_.item()) : step_; }
  void set_step_count(std::int64_t steps) {
    if (steps < 0) detail::fail(name_, "step count ", steps, " is negative");
    step_ = steps;
    if (device_step_.defined()) device_step_ = double(steps);
  }

  /// A state list over every parameter, by PyTorch's name ("exp_avg", "momentum_buffer", ...), to
  /// read, or to restore from a checkpoint by assigning values (`opt.state("exp_avg") = saved;`).
  /// On a fresh optimizer it makes the list (its starting values) for the caller to fill.
  TensorList<S>& state(std::string_view name) {
    NamedState* s = find_state(name);
    if (!s) {
      const std::vector<std::string> names = state_names();
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        std::string list;
        for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
        detail::fail(name_, "no state named '", name, "'; this optimizer has: ", list.empty() ? "none" : list);
      }
      s = &make_state(std::string(name), 0.0, true);
    }
    s->started = true;  // the caller may write it: a step must not take it for new
    return s->all;
  }
  /// The state lists: those the options declare (Derived::state_specs), then any other made.
  std::vector<std::string> state_names() const {
    std::vector<std::string> names;
    auto add = [&](std::string_view n) {
      if (std::find(names.begin(), names.end(), n) == names.end()) names.emplace_back(n);
    };
    if constexpr (kDeclaresState)
      for (const Group& g : groups_)
        for (const StateSpec& spec : Derived::state_specs(g.options)) add(spec.name);
    for (const NamedState& s : states_) add(s.name);
    return names;
  }

  /// The float32 master copies of 16-bit parameters (options().master_weights), made at the first
  /// step that uses them.
  TensorList<S>& master_params() {
    if (!master_)
      detail::fail(name_, "no master weights: set options().master_weights = true (16-bit parameters) and step");
    return master_->all;
  }

  /// The step count, each group's parameters and options and every state list made so far, as
  /// named tensors (StateDict, optim/state_dict.hpp). A snapshot: later steps do not change it.
  StateDict state_dict() const {
    StateDict dict;
    dict.push_back(detail::scalar_entry<std::int64_t>("step", step_count()));
    for (std::size_t g = 0; g < groups_.size(); ++g) {
      const std::string prefix = detail::cat("param_groups.", g, ".");
      std::vector<std::int64_t> index(groups_[g].index.begin(), groups_[g].index.end());
      dict.push_back({prefix + "params", weft::from_vector<std::int64_t>(index, Shape{std::int64_t(index.size())})});
      if constexpr (kNamesOptions) {
        Options o = groups_[g].options;
        for_each_option(o, [&](const char* option, auto& value) {
          dict.push_back(detail::scalar_entry<double>(prefix + option, double(value)));
        });
      }
    }
    auto add = [&](const TensorList<S>& list, const std::string& name) {
      for (std::size_t i = 0; i < list.size(); ++i) {
        const TensorView<S>& t = list[i];
        // A CPU tensor is copied here; TensorBytes copies a device tensor to the host anyway.
        dict.push_back({detail::cat("state.", i, ".", name), t.device().is_cpu() ? io::TensorBytes(t.clone())
                                                                                 : io::TensorBytes(t)});
      }
    };
    for (const NamedState& s : states_) add(s.all, s.name);
    if (master_) add(master_->all, "master_param");
    return dict;
  }

  /// Restores a state_dict() of an optimizer of the same kind, parameter shapes, groups and
  /// dtypes, before or after this one's first step: the step count, every group's options and the
  /// state lists (those the dict lacks are dropped: the next step starts them, as a first step
  /// would). A missing, unexpected or mis-shaped entry is a weft::Error that lists them all, and
  /// then nothing is written.
  void load_state_dict(const StateDict& dict) {
    detail::StateDictReader in(name_, dict);
    std::int64_t steps = 0;
    if (const io::NamedTensor* e = in.take("step", DType::int64, Shape{1})) {
      steps = in.element<std::int64_t>(*e, 0);
      if (steps < 0) in.bad_value(detail::cat("step (", steps, ": negative)"));
    }
    std::vector<Options> options;
    for (std::size_t g = 0; g < groups_.size(); ++g) {
      const std::string prefix = detail::cat("param_groups.", g, ".");
      const std::vector<std::size_t>& index = groups_[g].index;
      if (const io::NamedTensor* e = in.take(prefix + "params", DType::int64, Shape{std::int64_t(index.size())}))
        for (std::size_t j = 0; j < index.size(); ++j)
          if (in.element<std::int64_t>(*e, j) != std::int64_t(index[j])) {
            in.bad_value(detail::cat(prefix, "params (parameter ", in.element<std::int64_t>(*e, j), " at position ", j,
                                     ", expected ", index[j], ")"));
            break;
          }
      options.push_back(groups_[g].options);
      if constexpr (kNamesOptions)
        for_each_option(options.back(), [&](const char* option, auto& value) {
          if (const io::NamedTensor* e = in.take(prefix + option, DType::float64, Shape{1}))
            value = static_cast<std::remove_reference_t<decltype(value)>>(in.element<double>(*e, 0));
        });
    }
    // A state list is in the dict for every parameter or for none (not made yet).
    std::vector<std::string> loaded;
    std::vector<const io::NamedTensor*> entries;
    auto take_list = [&](const std::string& name) {
      bool any = false;
      for (std::size_t i = 0; i < params_.size(); ++i) any = any || in.contains(detail::cat("state.", i, ".", name));
      if (!any) return;
      loaded.push_back(name);
      for (std::size_t i = 0; i < params_.size(); ++i)
        entries.push_back(in.take(detail::cat("state.", i, ".", name), dtype_of<S>, params_[i].shape()));
    };
    for (const std::string& name : state_names_for(options, dict)) take_list(name);
    const std::size_t state_lists = loaded.size();
    if constexpr (weft::is_16bit_float_v<P>) take_list("master_param");
    in.finish();
    for (const Options& o : options) Derived::check_options(o);

    for (std::size_t g = 0; g < groups_.size(); ++g) groups_[g].options = options[g];
    set_step_count(steps);
    const std::size_t n = params_.size();
    std::deque<NamedState> states;
    for (std::size_t s = 0; s < state_lists; ++s) {
      NamedState* old = find_state(loaded[s]);
      states.push_back(old ? std::move(*old) : make_state_lists(loaded[s]));
      for (std::size_t i = 0; i < n; ++i) detail::copy_entry(states.back().all[i], *entries[s * n + i]);
      states.back().started = true;
    }
    states_ = std::move(states);
    master_.reset();
    if (loaded.size() > state_lists) {
      NamedState& m = master_.emplace(make_state_lists("master_param"));
      for (std::size_t i = 0; i < n; ++i) detail::copy_entry(m.all[i], *entries[state_lists * n + i]);
    }
  }
  /// Restores a state dict saved with io::save_safetensors(path, opt.state_dict()).
  void load_state_dict(const io::SafeTensors& file) { load_state_dict(detail::read_state_dict(name_, file)); }

 protected:
  Optimizer(const char* name, Params<P> params, Options options)
      : Optimizer(name, std::vector<ParamGroup<P, Options>>{{std::move(params), options}}) {}
  Optimizer(const char* name, std::vector<ParamGroup<P, Options>> groups) : name_(name) {
    if (groups.empty()) detail::fail(name_, "no parameter groups; pass at least one");
    for (std::size_t g = 0; g < groups.size(); ++g) {
      Derived::check_options(groups[g].options);
      Group group{{}, {}, groups[g].options};  // its params are listed once every parameter is checked
      const Params<P>& given = groups[g].params;
      const std::size_t n = given.vars.empty() ? given.tensors.size() : given.vars.size();
      for (std::size_t j = 0; j < n; ++j) {
        const std::size_t k = params_.size();
        if (given.vars.empty()) {
          vars_.emplace_back();
          params_.push_back(given.tensors[j]);
        } else {
          const ad::Var<P>& v = given.vars[j];
          if (!v.defined()) detail::fail(name_, "parameter ", k, " is an empty (default-constructed) ad::Var");
          if (!v.requires_grad() || !v.node()->leaf)
            detail::fail(name_, "parameter ", k, " (shape ", v.shape(), ") is ",
                         v.requires_grad() ? "computed by an op" : "an ad::Var that requires no gradient",
                         "; optimizers update leaves made by ad::param");
          vars_.push_back(v);
          params_.push_back(v.data());
        }
        group.index.push_back(k);
      }
      groups_.push_back(std::move(group));
    }
    for (std::size_t k = 0; k < params_.size(); ++k) {
      const TensorView<P>& p = params_[k];
      if (!p.defined()) detail::fail(name_, "parameter ", k, " is an empty (default-constructed) tensor");
      if (!p.is_contiguous())
        detail::fail(name_, "parameter ", k, " of shape ", p.shape(), " has strides ", p.strides(),
                     "; optimizers update contiguous tensors: pass .contiguous() copies");
      if (p.device() != params_[0].device())
        detail::fail(name_, "parameter ", k, " is on ", p.device(), " but parameter 0 on ", params_[0].device(),
                     "; one optimizer updates one device (make one per device)");
    }
    check_distinct();
    for (Group& g : groups_)
      for (std::size_t k : g.index) g.params.push_back(params_[k]);
  }

  /// The state list `name` of the group being stepped (what update() reads and writes), made
  /// on first use for every parameter: each group's starting value (Derived::state_specs, else
  /// `init`), filled by one foreach kernel per group.
  TensorList<S>& slot(const std::string& name, double init = 0.0) {
    NamedState* s = find_state(name);
    return (s ? *s : make_state(name, init, false)).groups[active_group_];
  }
  /// Whether the state list `name` holds values from an earlier step, a checkpoint or the caller
  /// (state(name)), rather than only its starting value: SGD's first step copies the direction
  /// into a new momentum buffer, as PyTorch's.
  bool slot_started(std::string_view name) const {
    for (const NamedState& s : states_)
      if (s.name == name) return s.started;
    return false;
  }

 private:
  template <class Run>
  friend struct detail::DeviceStep;

  static constexpr bool kDeclaresState = requires(const Options& o) { Derived::state_specs(o); };
  static constexpr bool kNamesOptions = requires(Options& o) { for_each_option(o, [](const char*, auto&) {}); };

  struct Group {
    TensorList<P> params;
    std::vector<std::size_t> index;  // each parameter's position in params_
    Options options;
  };
  /// A state list over every parameter and, sharing its tensors, one per group. (A TensorList is
  /// a handle whose assignment writes elements: these are made once and never assigned.)
  struct NamedState {
    std::string name;
    TensorList<S> all;
    std::vector<TensorList<S>> groups;
    bool started = false;  // see slot_started()
  };

  Derived& derived() { return static_cast<Derived&>(*this); }
  Device device() const { return params_.empty() ? Device::cpu() : params_[0].device(); }
  std::size_t checked_group(std::size_t group) const {
    if (group >= groups_.size())
      detail::fail(name_, "no parameter group ", group, "; this optimizer has ", groups_.size());
    return group;
  }

  /// Per group, the members of `all` (one per parameter) that belong to it; one group shares `all`.
  template <class T>
  std::vector<TensorList<T>> split(const TensorList<T>& all) const {
    if (groups_.size() == 1) return {all};
    std::vector<TensorList<T>> lists(groups_.size());
    for (std::size_t g = 0; g < groups_.size(); ++g)
      for (std::size_t k : groups_[g].index) lists[g].push_back(all[k]);
    return lists;
  }

  /// A parameter listed twice (in one group or two) would be updated twice by one kernel.
  void check_distinct() const {
    std::vector<std::pair<const void*, std::size_t>> at;
    for (std::size_t k = 0; k < params_.size(); ++k)
      if (params_[k].numel() > 0) at.emplace_back(params_[k].data(), k);
    std::sort(at.begin(), at.end());
    for (std::size_t j = 1; j < at.size(); ++j)
      if (at[j].first == at[j - 1].first)
        detail::fail(name_, "parameters ", std::min(at[j - 1].second, at[j].second), " and ",
                     std::max(at[j - 1].second, at[j].second),
                     " are the same tensor; list each parameter once, in one group");
  }

  NamedState* find_state(std::string_view name) {
    for (NamedState& s : states_)
      if (s.name == name) return &s;
    return nullptr;
  }
  /// Uninitialized lists for the state `name`.
  NamedState make_state_lists(const std::string& name) const {
    NamedState s{name, {}, {}, false};
    for (const auto& p : params_) s.all.push_back(weft::empty<S>(p.shape(), p.device()));
    s.groups = split(s.all);
    return s;
  }
  NamedState& make_state(const std::string& name, double init, bool started) {
    NamedState s = make_state_lists(name);
    s.started = started;
    for (std::size_t g = 0; g < groups_.size(); ++g)
      if (!s.groups[g].empty()) s.groups[g] = S(initial_value(groups_[g].options, name, init));
    states_.push_back(std::move(s));
    return states_.back();
  }
  static double initial_value(const Options& o, std::string_view name, double init) {
    if constexpr (kDeclaresState)
      for (const StateSpec& spec : Derived::state_specs(o))
        if (name == spec.name) return spec.init;
    return init;
  }
  /// The state lists a dict may hold under these options: the declared ones, or, for an optimizer
  /// that declares none, every `state.<i>.<name>` the dict names.
  std::vector<std::string> state_names_for(const std::vector<Options>& options, const StateDict& dict) const {
    std::vector<std::string> names;
    auto add = [&](const std::string& n) {
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    };
    if constexpr (kDeclaresState) {
      for (const Options& o : options)
        for (const StateSpec& spec : Derived::state_specs(o)) add(spec.name);
    } else {
      for (const io::NamedTensor& e : dict) {
        if (e.name.rfind("state.", 0) != 0) continue;
        const std::size_t dot = e.name.find('.', 6);
        if (dot != std::string::npos && e.name.substr(dot + 1) != "master_param") add(e.name.substr(dot + 1));
      }
    }
    return names;
  }

  /// Parameter k's ad::Var, for `what` (step(), zero_grad()), which needs one.
  const ad::Var<P>& leaf(const char* what, std::size_t k) const {
    if (!vars_[k].defined())
      detail::fail(name_, what, " uses each parameter's grad(), but parameter ", k, " (shape ", params_[k].shape(),
                   ") was given as a tensor, which has none; pass its gradients to step(grads), or give the "
                   "optimizer ad::param leaves");
    return vars_[k];
  }
  /// Every parameter's grad(), now (made as zeros where no backward has written one).
  TensorList<P> leaf_grads(const char* what) {
    TensorList<P> grads;
    for (std::size_t k = 0; k < vars_.size(); ++k) leaf(what, k);
    for (ad::Var<P>& v : vars_) grads.push_back(v.grad().view());
    return grads;
  }

  void check_grads(const TensorList<P>& grads) const {
    if (grads.size() != params_.size())
      detail::fail(name_, grads.size(), " gradients for ", params_.size(), " parameters; pass one per parameter");
    for (std::size_t k = 0; k < grads.size(); ++k) {
      const TensorView<P>& g = grads[k];
      if (!g.defined()) detail::fail(name_, "gradient ", k, " is an empty (default-constructed) tensor");
      if (!(g.shape() == params_[k].shape()))
        detail::fail(name_, "gradient ", k, " has shape ", g.shape(), " but parameter ", k, " has shape ",
                     params_[k].shape());
      if (g.device() != params_[k].device())
        detail::fail(name_, "gradient ", k, " is on ", g.device(), " but its parameter on ", params_[k].device());
      if (!g.is_contiguous())
        detail::fail(name_, "gradient ", k, " of shape ", g.shape(), " has strides ", g.strides(),
                     "; pass contiguous gradients (.contiguous())");
      // The list shows a caller's tensor's elements; when it holds the only reference, that
      // tensor has been given other elements or destroyed, and these are stale.
      if (!grads.owns(k) && g.storage().use_count() == 1)
        detail::fail(name_, "gradient ", k, " (shape ", g.shape(), ") is stale: the tensor the gradient list was "
                     "built from has since been reassigned (`g = weft::eval(...)` moves other elements into g) or "
                     "destroyed, and only the list still shows the old elements. Write new gradients into the "
                     "listed tensors (`g = expr;` writes in place), build the list after assigning, or give the "
                     "optimizer ad::param leaves and call step(), which reads each grad() at the step");
    }
  }

  void check_scale(const GradScale& s) const {
    auto check = [&](const TensorView<const float>& t, const char* what) {
      if (!t.defined() || t.numel() != 1)
        detail::fail(name_, "GradScale.", what, " must hold one float32 element, got ",
                     t.defined() ? weft::detail::cat("shape ", t.shape()) : std::string("an empty tensor"));
      if (t.device() != device())
        detail::fail(name_, "GradScale.", what, " is on ", t.device(), " but the parameters on ", device());
    };
    check(s.scale, "scale");
    check(s.found_inf, "found_inf");
  }

  /// Master copies of every parameter are made at the first step whose options ask for them.
  bool use_master() {
    bool requested = false;
    for (const Group& g : groups_) requested = requested || g.options.master_weights;
    if (!requested) return false;
    if constexpr (!weft::is_16bit_float_v<P>) {
      detail::fail(name_, "master_weights keeps float32 copies of 16-bit parameters, but the parameters are ",
                   dtype_name<P>(), "; turn it off");
    } else {
      if (!master_) {
        NamedState& m = master_.emplace(NamedState{"master_param", {}, {}, true});
        for (const auto& p : params_) m.all.push_back(weft::eval(weft::cast<S>(p)));
        m.groups = split(m.all);
      }
      return true;
    }
  }

  /// The step count lives on the device for CUDA parameters (as in PyTorch's fused optimizers:
  /// the host never reads found_inf or waits for the GPU), on the host for CPU parameters, where
  /// the host is the device.
  void run_step(const TensorList<P>& grads, const GradScale* scale) {
    if (device().is_cuda()) {
      weft::detail::check_device_compiled(name_, device());
      // Only nvcc files compile the CUDA executors (docs/architecture.md).
      if constexpr (weft::detail::kCudaCompiled) run_device_step<detail::RunOnCuda>(grads, scale);
    } else {
      run_host_step(grads, scale);
    }
  }

  /// The checks of every step, before anything is written; returns whether it updates master copies.
  bool prepare_step(const TensorList<P>& grads, const GradScale* scale) {
    for (const Group& g : groups_) Derived::check_options(g.options);
    check_grads(grads);
    if (scale) check_scale(*scale);
    return use_master();
  }
  static double grad_sign(const Options& o) { return o.maximize ? -1.0 : 1.0; }

  void run_host_step(const TensorList<P>& grads, const GradScale* scale) {
    const bool master = prepare_step(grads, scale);
    double unscale = 1.0;
    if (scale) {
      if (scale->found_inf.item() != 0.0f) {
        log_message(LogComponent::optim, LogLevel::info, name_, " step skipped: found_inf is set (step count stays ", step_,
            ")");
        return;
      }
      unscale = 1.0 / double(scale->scale.item());
    }
    const double t = double(step_ + 1);
    const std::vector<TensorList<P>> group_grads = split(grads);
    for_each_group([&](std::size_t g, auto& read) {
      const double grad_mul = grad_sign(groups_[g].options) * unscale;
      derived().update(make_context<detail::RunOnCpu>(g, read, group_grads[g] * grad_mul, t, nullptr));
    });
    ++step_;
    log_step(grads, master, weft::detail::cat("step ", step_));
  }

  /// A one-element kernel adds found_inf == 0 to the count; the step kernels compute their
  /// numbers from it and write where(found_inf != 0, old, new) for every output.
  template <class Run>
  void run_device_step(const TensorList<P>& grads, const GradScale* scale) {
    const bool master = prepare_step(grads, scale);
    if (!device_step_.defined()) device_step_ = weft::full<S>(Shape{1}, S(step_), device());
    if (!scale && !no_skip_scale_.defined()) {
      no_skip_scale_ = weft::ones<float>(Shape{1}, device());
      no_skip_found_inf_ = weft::zeros<float>(Shape{1}, device());
    }
    const GradScale s = scale ? *scale : GradScale{no_skip_scale_, no_skip_found_inf_};
    auto skip = s.found_inf != 0.0;
    device_step_ = weft::where(skip, device_step_, device_step_ + 1.0);  // this step's t, or the old count
    const std::vector<TensorList<P>> group_grads = split(grads);
    for_each_group([&](std::size_t g, auto& read) {
      derived().update(make_context<Run>(g, read, group_grads[g] * (grad_sign(groups_[g].options) / s.scale),
                                         weft::detail::as_expr(device_step_), skip));
    });
    log_step(grads, master, "step count on the device (+1 one-element kernel)");
  }

  /// f(g, values to update) for each group with parameters, as the group being stepped (slot()).
  /// Afterwards every state list holds a step's values.
  template <class F>
  void for_each_group(F&& f) {
    for (std::size_t g = 0; g < groups_.size(); ++g) {
      if (groups_[g].params.empty()) continue;
      active_group_ = g;
      if constexpr (weft::is_16bit_float_v<P>) {
        if (groups_[g].options.master_weights) {
          f(g, master_->groups[g]);
          continue;
        }
      }
      f(g, groups_[g].params);
    }
    active_group_ = 0;
    for (NamedState& s : states_) s.started = true;
  }

  template <class Run, class Read, class Grad, class Step, class Skip>
  auto make_context(std::size_t g, Read& read, const Grad& grad, const Step& t, const Skip& skip) {
    return detail::StepContext<P, S, Options, Read, weft::detail::expr_t<Grad>, Step, Skip, Run>{
        name_, &groups_[g].options, &groups_[g].params, &read, weft::detail::as_expr(grad), t, skip};
  }

  void log_step(const TensorList<P>& grads, bool master, const std::string& what) const {
    if (!log_enabled(LogComponent::optim)) return;
    std::size_t kernels = 0;
    for (const Group& g : groups_) kernels += g.params.empty() ? 0 : 1;
    log_message(LogComponent::optim, LogLevel::info, name_, " ", what, ": ", groups_.size(),
        groups_.size() == 1 ? " group" : " groups", " on ", device(), ", ", grads.size(), " tensors, ", grads.numel(),
        " elements, ", dtype_name<P>(), " parameters, ", dtype_name<S>(), " state",
        master ? " with master weights" : "", ", ", kernels, kernels == 1 ? " kernel" : " kernels");
  }

  const char* name_;
  TensorList<P> params_;            // every parameter, group after group
  std::vector<ad::Var<P>> vars_;    // parameter k's ad::Var, or an empty one for a tensor
  std::vector<Group> groups_;
  std::size_t active_group_ = 0;    // the group being stepped, for slot()
  std::deque<NamedState> states_;  // a deque: state(name)'s references stay valid as lists are made
  std::optional<NamedState> master_;  // the float32 master copies, once made
  std::int64_t step_ = 0;
  Tensor<S> device_step_;  // the step count, once it lives on the device
  Tensor<float> no_skip_scale_, no_skip_found_inf_;  // 1 and 0: device-side steps without a GradScale
};

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::optim

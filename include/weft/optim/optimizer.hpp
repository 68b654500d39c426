// SPDX-License-Identifier: MIT
/// @file The optimizer base: parameter and state lists, the step count, unscaling and skipping
/// (GradScale), float32 master weights, input checks and the `optim` log. An optimizer adds
/// only its update, written as foreach expressions over a StepContext (see sgd.hpp, adam.hpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "weft/ops/factories.hpp"
#include "weft/core/tensor_list.hpp"
#include "weft/ops/fuse.hpp"
#include "weft/log/log.hpp"
#include "weft/optim/grad_scale.hpp"

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
struct RunOnCpu {
  template <class... Stmts>
  static void run(const char* op, Stmts&... stmts) {
    weft::detail::run_foreach_statements<ForeachBackends::cpu_only>(op, stmts...);
  }
};
struct RunOnCuda {
  template <class... Stmts>
  static void run(const char* op, Stmts&... stmts) {
    weft::detail::run_foreach_statements<ForeachBackends::cuda_only>(op, stmts...);
  }
};

/// What an optimizer's update() sees for one step: param() (the values to update: the
/// parameters, or their float32 master copies), grad (unscaled, negated under maximize), t (this
/// step's number, from 1) and apply(), which writes the new parameters and state in ONE kernel
/// (run by Run).
template <class P, class S, class Read, class Grad, class Step, class Skip, class Run>
struct StepContext {
  static constexpr bool kMaster = !std::is_same_v<Read, TensorList<P>>;
  static constexpr bool kSkips = !std::is_same_v<Skip, std::nullptr_t>;

  const char* op;
  TensorList<P>* params;
  Read* read;  // params, or the master copies
  Grad grad;
  Step t;
  Skip skip;  // found_inf != 0 (an expression) when the step may be skipped on the device

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

/// The base of weft's optimizers (CRTP). Options is a struct with PyTorch's names that the base
/// holds (`options()`) and reads `maximize` and `master_weights` from; Derived
/// provides `static void check_options(const Options&)` and `template <class Ctx> void
/// update(const Ctx&)`: the update as foreach expressions over ctx.param() and ctx.grad, ending
/// in ctx.apply(new_params, Ctx::write(state, value)...).
///
/// P is the parameters' dtype, S the state's (float32 for 16-bit and float32 parameters, or
/// float64). One optimizer is one (device, dtype) group: every step is one kernel over all its
/// tensors, plus, when the step count lives on the device, a one-element kernel that counts it.
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
  std::size_t num_param_groups() const { return 1; }
  Options& options(std::size_t group) {
    check_group(group);
    return options_;
  }
  const Options& options(std::size_t group) const {
    check_group(group);
    return options_;
  }

  /// One step with these gradients (same length, shapes and device as the parameters).
  void step(const TensorList<P>& grads) { run_step(grads, nullptr); }
  /// One step with loss-scaled gradients: unscaled in the kernel, skipped when scale.found_inf != 0.
  void step(const TensorList<P>& grads, const GradScale& scale) { run_step(grads, &scale); }

  const TensorList<P>& params() const { return params_; }

  /// Steps taken (skipped steps do not count). Reading it after a device-side step copies one
  /// number from the device, which waits for the step to finish.
  std::int64_t step_count() const { return device_step_.defined() ? std::int64_t(device_step_.item()) : step_; }
  void set_step_count(std::int64_t steps) {
    if (steps < 0) detail::fail(name_, "step count ", steps, " is negative");
    step_ = steps;
    if (device_step_.defined()) device_step_ = double(steps);
  }

  /// A state list by PyTorch's name ("exp_avg", "momentum_buffer", ...), to read or to restore
  /// from a checkpoint by assigning values (`opt.state("exp_avg") = saved;`).
  TensorList<S>& state(std::string_view name) {
    for (auto& s : states_)
      if (s.name == name) return s.list;
    std::string names;
    for (auto& s : states_) names += (names.empty() ? "" : ", ") + s.name;
    detail::fail(name_, "no state named '", name, "'; this optimizer has: ", names.empty() ? "none" : names);
  }
  std::vector<std::string> state_names() const {
    std::vector<std::string> names;
    for (auto& s : states_) names.push_back(s.name);
    return names;
  }

  /// The float32 master copies of 16-bit parameters (options().master_weights), made at the first
  /// step that uses them.
  TensorList<S>& master_params() {
    if (master_.empty() && !params_.empty())
      detail::fail(name_, "no master weights: set options().master_weights = true (16-bit parameters) and step");
    return master_;
  }

 protected:
  Optimizer(const char* name, TensorList<P> params, Options options)
      : name_(name), params_(std::move(params)), options_(options) {
    Derived::check_options(options_);
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
  }

  /// The state list `name`, made on first use: one tensor per parameter, filled with `init` by
  /// one foreach kernel.
  TensorList<S>& slot(const std::string& name, double init = 0.0) {
    for (auto& s : states_)
      if (s.name == name) return s.list;
    TensorList<S> list;
    for (const auto& p : params_) list.push_back(weft::empty<S>(p.shape(), p.device()));
    if (list.size() != 0) list = S(init);
    states_.push_back({name, list});
    return states_.back().list;
  }
  bool has_slot(std::string_view name) const {
    for (auto& s : states_)
      if (s.name == name) return true;
    return false;
  }

 private:
  template <class Run>
  friend struct detail::DeviceStep;

  struct NamedState {
    std::string name;
    TensorList<S> list;
  };

  Derived& derived() { return static_cast<Derived&>(*this); }
  void check_group(std::size_t group) const {
    if (group >= num_param_groups())
      detail::fail(name_, "no parameter group ", group, "; this optimizer has ", num_param_groups());
  }
  Device device() const { return params_.empty() ? Device::cpu() : params_[0].device(); }

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

  /// Master copies are made (from the parameters) at the first step that asks for them.
  bool use_master(bool requested) {
    if (!requested) return false;
    if constexpr (!weft::is_16bit_float_v<P>) {
      detail::fail(name_, "master_weights keeps float32 copies of 16-bit parameters, but the parameters are ",
                   dtype_name<P>(), "; turn it off");
    } else {
      if (master_.empty())
        for (const auto& p : params_) master_.push_back(weft::eval(weft::cast<S>(p)));
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

  /// The checks of every step; returns whether it updates master copies.
  bool prepare_step(const TensorList<P>& grads, const GradScale* scale) {
    Derived::check_options(options_);
    check_grads(grads);
    if (scale) check_scale(*scale);
    return use_master(options_.master_weights);
  }
  double grad_sign() const { return options_.maximize ? -1.0 : 1.0; }

  void run_host_step(const TensorList<P>& grads, const GradScale* scale) {
    const bool master = prepare_step(grads, scale);
    double grad_mul = grad_sign();
    if (scale) {
      if (scale->found_inf.item() != 0.0f) {
        log_message(LogComponent::optim, LogLevel::info, name_, " step skipped: found_inf is set (step count stays ", step_,
            ")");
        return;
      }
      grad_mul /= double(scale->scale.item());
    }
    const double t = double(step_ + 1);
    with_read(master, [&](auto& read) {
      derived().update(make_context<detail::RunOnCpu>(read, grads * grad_mul, t, nullptr));
    });
    ++step_;
    log_step(grads, master, weft::detail::cat("step ", step_));
  }

  /// A one-element kernel adds found_inf == 0 to the count; the step kernel computes its
  /// numbers from it and writes where(found_inf != 0, old, new) for every output.
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
    with_read(master, [&](auto& read) {
      derived().update(
          make_context<Run>(read, grads * (grad_sign() / s.scale), weft::detail::as_expr(device_step_), skip));
    });
    log_step(grads, master, "step count on the device (+1 one-element kernel)");
  }

  template <class F>
  void with_read(bool master, F&& f) {
    if constexpr (weft::is_16bit_float_v<P>) {
      if (master) return f(master_);
    }
    f(params_);
  }

  template <class Run, class Read, class Grad, class Step, class Skip>
  auto make_context(Read& read, const Grad& grad, const Step& t, const Skip& skip) {
    return detail::StepContext<P, S, Read, weft::detail::expr_t<Grad>, Step, Skip, Run>{
        name_, &params_, &read, weft::detail::as_expr(grad), t, skip};
  }

  void log_step(const TensorList<P>& grads, bool master, const std::string& what) const {
    if (!log_enabled(LogComponent::optim)) return;
    log_message(LogComponent::optim, LogLevel::info, name_, " ", what, ": 1 group on ", device(), ", ", grads.size(),
        " tensors, ", grads.numel(), " elements, ", dtype_name<P>(), " parameters, ", dtype_name<S>(), " state",
        master ? " with master weights" : "", ", 1 kernel");
  }

  const char* name_;
  TensorList<P> params_;
  Options options_;
  std::vector<NamedState> states_;
  TensorList<S> master_;
  std::int64_t step_ = 0;
  Tensor<S> device_step_;  // the step count, once it lives on the device
  Tensor<float> no_skip_scale_, no_skip_found_inf_;  // 1 and 0: device-side steps without a GradScale
};

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::optim

// SPDX-License-Identifier: MIT
/// @file The optimizer checks, instantiated per optimizer by optim_golden_test.cpp, optim_f32_test.cpp and optim_device_step_test.cpp: trajectories against
/// torch.optim's golden files (tests/golden/optim, written by tests/golden/make_optim_golden.py).
///
///   float64      every step's parameters and state match torch's float64 run to 1e-12 relative
///                (a different but equally exact order of operations differs by a few 1e-16 per op),
///                plain, with loss-scaled gradients (the host path every CPU step takes) and with the
///                step count on the device (the path of every CUDA step, run on the CPU's executor:
///                optim_device_step_test.cpp);
///   float32      weft in float32 against weft in float64 on the same float32-rounded inputs (the
///                float64 run being pinned to torch above): within 2x the error torch's own float32
///                run makes against float64 at that step, plus half an ulp of the stored value;
///   bfloat16     bf16 parameters with float32 state against torch run in float32 with its
///                parameters rounded to bf16 after each step (the same arithmetic, so within one bf16
///                ulp, the order of operations flipping a rounding now and then); with master weights,
///                the float32 master copies follow float64 as closely as a float32 run and the
///                parameters are exactly their rounded values.
/// Skipped steps (found_inf) get NaN gradients: any read of them would show.
#pragma once

#include <array>

#include <weft/optim/optim.hpp>

#include "optim_golden.hpp"
#include "reference.hpp"

namespace weft_test {

using weft::TensorList;
namespace optim = weft::optim;

/// Each optimizer's golden configurations (tests/golden/optim, make_optim_golden.py), which every
/// precision's and path's checks loop over.
inline constexpr std::array<const char*, 4> kAdamGoldens = {
    "adam_default", "adam_amsgrad", "adam_wd_maximize", "adam_schedule"};
inline constexpr std::array<const char*, 3> kAdamWGoldens = {
    "adamw_default", "adamw_amsgrad_wd", "adamw_maximize"};
inline constexpr std::array<const char*, 3> kAdagradGoldens = {
    "adagrad_default", "adagrad_decay_wd", "adagrad_maximize"};
inline constexpr std::array<const char*, 4> kRmspropGoldens = {
    "rmsprop_default", "rmsprop_centered", "rmsprop_momentum", "rmsprop_centered_momentum"};
inline constexpr std::array<const char*, 5> kSgdGoldens = {
    "sgd_plain", "sgd_momentum", "sgd_dampening_wd", "sgd_nesterov", "sgd_maximize"};
inline constexpr std::array<const char*, 3> kLionGoldens = {"lion_default", "lion_wd", "lion_maximize"};

/// An options struct from a golden file's torch keyword arguments (an unknown one fails the test).
template <class O>
O golden_options(const OptimGolden& g) {
  O o{};
  for (const auto& option : g.options) {
    const std::string& key = option.first;  // (no structured binding: the lambdas capture these,
    const std::string& value = option.second;  // which clang 16 cannot do under OpenMP)
    bool known = false;
    auto number = [&](const char* name, double O::*member) {
      if (key == name) o.*member = std::stod(value), known = true;
    };
    auto flag = [&](const char* name, bool O::*member) {
      if (key == name) o.*member = value == "1", known = true;
    };
    number("lr", &O::lr);
    flag("maximize", &O::maximize);
    if constexpr (requires { o.weight_decay; }) number("weight_decay", &O::weight_decay);
    if constexpr (requires { o.momentum; }) number("momentum", &O::momentum);
    if constexpr (requires { o.dampening; }) number("dampening", &O::dampening);
    if constexpr (requires { o.eps; }) number("eps", &O::eps);
    if constexpr (requires { o.alpha; }) number("alpha", &O::alpha);
    if constexpr (requires { o.lr_decay; }) number("lr_decay", &O::lr_decay);
    if constexpr (requires { o.initial_accumulator_value; })
      number("initial_accumulator_value", &O::initial_accumulator_value);
    if constexpr (requires { o.nesterov; }) flag("nesterov", &O::nesterov);
    if constexpr (requires { o.amsgrad; }) flag("amsgrad", &O::amsgrad);
    if constexpr (requires { o.centered; }) flag("centered", &O::centered);
    if constexpr (requires { o.betas; }) {
      if (key == "betas") {
        const auto comma = value.find(',');
        o.betas = {std::stod(value.substr(0, comma)), std::stod(value.substr(comma + 1))};
        known = true;
      }
    }
    REQUIRE_MESSAGE(known, g.name << ": option " << key << " is not handled by the test");
  }
  return o;
}

/// A list of tensors of `shapes` holding `flat` (all tensors' elements in order) rounded to T.
template <class T>
TensorList<T> make_list(const std::vector<Shape>& shapes, const std::vector<double>& flat, double mul = 1.0) {
  TensorList<T> list;
  std::size_t at = 0;
  for (const Shape& s : shapes) {
    std::vector<T> v;
    for (std::int64_t i = 0; i < s.numel(); ++i) v.push_back(make_value<T>(round_to<T>(flat.at(at++)) * mul));
    list.push_back(weft::from_vector<T>(v, s));
  }
  return list;
}

template <class T>
std::vector<double> flatten(const TensorList<T>& list) {
  std::vector<double> out;
  for (const auto& t : list)
    for (T x : t.to_vector()) out.push_back(decode<T>(reinterpret_cast<const unsigned char*>(&x)));
  return out;
}

/// Every |got - want| within tol(want, max |want|); reports the worst element.
template <class Tol>
void check_close(const std::string& what, const std::vector<double>& got, const std::vector<double>& want, Tol tol) {
  REQUIRE_MESSAGE(got.size() == want.size(), what << ": " << got.size() << " values, expected " << want.size());
  double scale = 0.0;
  for (double w : want) scale = std::max(scale, std::fabs(w));
  std::size_t worst = 0;
  double worst_ratio = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double t = tol(want[i], scale), err = std::fabs(got[i] - want[i]);
    const double ratio = err <= t ? err / (t > 0 ? t : 1.0) : std::numeric_limits<double>::infinity();
    if (!(ratio <= worst_ratio) || std::isnan(got[i])) worst = i, worst_ratio = std::isnan(got[i]) ? INFINITY : ratio;
  }
  char detail[160];
  std::snprintf(detail, sizeof detail, "element %zu is %.17g, expected %.17g (tolerance %.3g)", worst, got[worst],
                want[worst], tol(want[worst], scale));
  CHECK_MESSAGE(worst_ratio <= 1.0, what << ": " << detail);
}

enum class Mode { plain, scaled, device_count };
inline const char* mode_name(Mode m) {
  return m == Mode::plain ? "plain" : m == Mode::scaled ? "GradScale" : "GradScale, step count on the device";
}

/// Runs a golden configuration through Opt<P, S>: lr from the file's schedule each step; in the
/// scaled and device_count modes gradients scaled by 1024 (exact) and skipped steps as GradScale
/// with found_inf set and NaN gradients. device_count runs the kernel CUDA parameters get (the
/// count a one-element tensor, skips per element) on the CPU, through optim::detail::DeviceStep.
/// Calls check(opt, step) after every step. Also checks the step count, and that steps 2.. (new
/// learning rates included) ran no new kernel type. The mode is a template argument: a plain run
/// does not instantiate the GradScale kernels, nor a scaled one the device path's (compile time).
template <class P, class S, template <class, class> class Opt, Mode mode, class Check>
void run_golden(const OptimGolden& g, bool master, Check&& check) {
  using Options = std::remove_cvref_t<decltype(std::declval<Opt<P, S>&>().options())>;
  const std::string run = g.name + " (" + weft::dtype_name<P>() + " parameters, " + weft::dtype_name<S>() +
                          " state, " + mode_name(mode) + (master ? ", master weights)" : ")");
  INFO(run);
  Options o = golden_options<Options>(g);
  o.master_weights = master;
  Opt<P, S> opt(make_list<P>(g.shapes, g.param0), o);
  const Tensor<float> scale = weft::full<float>({1}, 1024.0f), clear = weft::zeros<float>({1}),
                      overflow = weft::ones<float>({1});
  const std::vector<double> nan(g.param0.size(), std::numeric_limits<double>::quiet_NaN());
  std::int64_t taken = 0, kernel_types = -1;
  auto scaled_step = [&](const TensorList<P>& grads, const optim::GradScale& s) {
    if constexpr (mode == Mode::device_count) optim::detail::DeviceStep<optim::detail::RunOnCpu>::step(opt, grads, &s);
    else opt.step(grads, s);
  };
  for (int step = 1; step <= g.steps; ++step) {
    CAPTURE(step);
    opt.options().lr = g.lr[std::size_t(step - 1)];
    if (g.skips.count(step)) {
      // plain: no step at all, as GradScaler does on the host (this also keeps the GradScale
      // kernels out of the plain runs' translation units: compile time)
      if constexpr (mode != Mode::plain) scaled_step(make_list<P>(g.shapes, nan), optim::GradScale{scale, overflow});
    } else if constexpr (mode == Mode::plain) {
      opt.step(make_list<P>(g.shapes, g.grad[std::size_t(step - 1)]));
      ++taken;
    } else {
      scaled_step(make_list<P>(g.shapes, g.grad[std::size_t(step - 1)], 1024.0), optim::GradScale{scale, clear});
      ++taken;
    }
    CHECK(opt.step_count() == taken);
    check(opt, step);
    if (step == 1) kernel_types = weft::kernel_types_run();
  }
  CHECK_MESSAGE(weft::kernel_types_run() == kernel_types, "a step after the first ran a new kernel type");
}

/// A check of every step's parameters and state against torch's float64 trajectory in `g`.
inline auto f64_check(const OptimGolden& g) {
  return [&g](auto& opt, int step) {
    const auto i = std::size_t(step - 1);
    auto tol = [](double want, double) { return 1e-12 * (1.0 + std::fabs(want)); };
    check_close("param", flatten(opt.params()), g.f64.at("param")[i], tol);
    for (const std::string& s : g.states) check_close(s, flatten(opt.state(s)), g.f64.at(s)[i], tol);
  };
}

/// float64 against torch's float64 trajectory: the CPU's path, plain and with a GradScale.
template <template <class, class> class Opt>
void check_golden_f64(const std::string& name) {
  const OptimGolden g = load_optim_golden(name);
  run_golden<double, double, Opt, Mode::plain>(g, false, f64_check(g));
  run_golden<double, double, Opt, Mode::scaled>(g, false, f64_check(g));
}

/// float64 against torch's float64 trajectory: CUDA's path (the step count on the device), on the
/// CPU's executor. Its own files (optim_device_step_test.cpp): it compiles a second set of kernels.
template <template <class, class> class Opt>
void check_golden_f64_device_step(const std::string& name) {
  const OptimGolden g = load_optim_golden(name);
  run_golden<double, double, Opt, Mode::device_count>(g, false, f64_check(g));
}

/// The float64 trajectory of a golden configuration (pinned to torch by check_golden_f64) on the
/// inputs `g` holds: parameters and every state, per step.
template <template <class, class> class Opt>
Trajectory reference_f64(const OptimGolden& g) {
  Trajectory ref;
  run_golden<double, double, Opt, Mode::plain>(g, false, [&](auto& opt, int) {
    ref["param"].push_back(flatten(opt.params()));
    for (const std::string& s : g.states) ref[s].push_back(flatten(opt.state(s)));
  });
  return ref;
}

/// A float64 trajectory: reference_f64<Opt>, or a function that returns it from another test file.
using ReferenceF64 = Trajectory (*)(const OptimGolden&);

/// The float64 references of the optimizers whose float32 and bf16 checks have their own files,
/// defined once, in optim_f32_test.cpp: optim_mixed_test.cpp then compiles no float64 optimizer
/// (each is half of such a file's compile time).
Trajectory adam_reference_f64(const OptimGolden& g);
Trajectory adamw_reference_f64(const OptimGolden& g);
Trajectory rmsprop_reference_f64(const OptimGolden& g);

/// A float32 value against float64: within 2x the error of torch's float32 run at that step (a
/// random walk of roundings over the steps: another order of operations lands within a small
/// multiple of it), plus two ulps of the largest value (where torch happened to be exact; values
/// are sums of terms that large, e.g. a momentum buffer that cancels to near zero).
inline auto f32_tolerance(const OptimGolden& g, int step, const std::string& what) {
  const double torch_err = g.f32err[std::size_t(step - 1)].at(what);
  return [torch_err](double, double scale) { return 2.0 * torch_err + 2.0 * ulp_of<float>(scale); };
}

/// Rounds a golden configuration's inputs to T (through float32, as the golden script does).
template <class T>
OptimGolden rounded_inputs(OptimGolden g) {
  for (auto& x : g.param0) x = round_to<T>(round_to<float>(x));
  for (auto& step : g.grad)
    for (auto& x : step) x = round_to<T>(round_to<float>(x));
  return g;
}

/// float32 against float64 on the same float32-rounded inputs.
template <template <class, class> class Opt>
void check_golden_f32(const std::string& name, ReferenceF64 reference = &reference_f64<Opt>) {
  const OptimGolden g = rounded_inputs<float>(load_optim_golden(name));
  const Trajectory ref = reference(g);
  run_golden<float, float, Opt, Mode::plain>(g, false, [&](auto& opt, int step) {
    const auto i = std::size_t(step - 1);
    check_close("param", flatten(opt.params()), ref.at("param")[i], f32_tolerance(g, step, "param"));
    for (const std::string& s : g.states) check_close(s, flatten(opt.state(s)), ref.at(s)[i], f32_tolerance(g, step, s));
  });
}

/// bfloat16 parameters with float32 state, without and with master weights, on the CPU's path (the
/// step count on the host; the device path is checked per optimizer in float64).
template <template <class, class> class Opt>
void check_golden_bf16(const std::string& name, ReferenceF64 reference = &reference_f64<Opt>) {
  const OptimGolden g = rounded_inputs<bfloat16>(load_optim_golden(name));
  run_golden<bfloat16, float, Opt, Mode::plain>(g, false, [&](auto& opt, int step) {
    const auto i = std::size_t(step - 1);
    // one bf16 ulp: torch rounds a float32 result that may differ from weft's in its last bit
    check_close("param", flatten(opt.params()), g.bf16.at("param")[i],
                [](double want, double) { return ulp_of<bfloat16>(want); });
    // the state sees the parameters only through weight decay: float32 rounding plus that
    for (const std::string& s : g.states)
      check_close(s, flatten(opt.state(s)), g.bf16.at(s)[i],
                  [](double want, double scale) { return 1e-5 * std::fabs(want) + 1e-6 * scale; });
  });
  // master weights: the float32 copies follow float64 like a float32 run; the parameters are
  // exactly their rounding
  const Trajectory ref = reference(g);
  run_golden<bfloat16, float, Opt, Mode::plain>(g, true, [&](auto& opt, int step) {
    const auto i = std::size_t(step - 1);
    const std::vector<double> master = flatten(opt.master_params());
    check_close("master", master, ref.at("param")[i], f32_tolerance(g, step, "param"));
    std::vector<double> rounded = master;
    for (double& x : rounded) x = round_to<bfloat16>(x);
    check_close("param = bf16(master)", flatten(opt.params()), rounded, [](double, double) { return 0.0; });
    for (const std::string& s : g.states) check_close(s, flatten(opt.state(s)), ref.at(s)[i], f32_tolerance(g, step, s));
  });
}

}  // namespace weft_test

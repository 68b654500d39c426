// SPDX-License-Identifier: MIT
/// @file A new optimizer written from scratch on weft::optim's base: AdaBelief (Zhuang et al. 2020),
/// checked against a plain double-precision loop. docs/optimizers.md walks through it.
//
// The base brings everything but the update: the step count, gradient unscaling and skipping
// (GradScale), float32 master weights for 16-bit parameters, input checks, state access for
// checkpoints and the `optim` log. The update is ordinary weft expressions over lists, so the
// whole step is ONE kernel, on the CPU or on CUDA.

#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include <weft/weft.hpp>

/// AdaBelief's options (the paper's names and defaults); the last two the optimizer base reads.
struct AdaBeliefOptions {
  double lr = 1e-3;
  std::pair<double, double> betas = {0.9, 0.999};
  double eps = 1e-16;
  bool maximize = false, master_weights = false;
};

/// AdaBelief: Adam with the second moment taken of the gradient's deviation from its mean:
///   m = b1 m + (1 - b1) g
///   s = b2 s + (1 - b2) (g - m)^2 + eps
///   p = p - lr / (1 - b1^t) * m / (sqrt(s / (1 - b2^t)) + eps)
template <weft::Element P, class S = weft::optim::default_state_t<P>>
class AdaBelief : public weft::optim::Optimizer<AdaBelief<P, S>, P, S, AdaBeliefOptions> {
 public:
  explicit AdaBelief(weft::TensorList<P> params, AdaBeliefOptions options = {})
      : AdaBelief::Optimizer("AdaBelief", std::move(params), options) {}

  /// Called at construction and before every step (options() may change in between).
  static void check_options(const AdaBeliefOptions& o) {
    if (!(o.lr >= 0)) throw weft::Error("AdaBelief: lr must be >= 0");
  }

  /// One step, as expressions: ctx.param() and ctx.grad are the values to read, ctx.t the step.
  template <class Ctx>
  void update(const Ctx& ctx) {
    const AdaBeliefOptions& o = this->options();
    const auto [b1, b2] = o.betas;
    weft::TensorList<S> m = this->slot("exp_avg"), s = this->slot("exp_avg_var");
    auto m1 = b1 * m + (1 - b1) * ctx.grad;
    auto s1 = b2 * s + (1 - b2) * weft::square(ctx.grad - m1) + o.eps;
    const auto step_size = o.lr / (1 - weft::optim::step_pow(b1, ctx.t));
    const auto bc2 = 1 - weft::optim::step_pow(b2, ctx.t);
    ctx.apply(ctx.param() - step_size * m1 / (weft::sqrt(s1 / bc2) + o.eps), Ctx::write(m, m1), Ctx::write(s, s1));
  }
};

int main() {
  const std::vector<weft::Shape> shapes = {{64, 32}, {32}, {1000}};
  weft::TensorList<float> params, grads;
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    params.push_back(weft::randn<float>(shapes[k], 10 + k));
    grads.push_back(weft::randn<float>(shapes[k], 20 + k));
  }
  // The reference: the same formulas, element by element, in double.
  std::vector<std::vector<double>> p, m, s;
  for (const auto& t : params) {
    const std::vector<float> v = t.to_vector();
    p.emplace_back(v.begin(), v.end());
    m.emplace_back(v.size(), 0.0);
    s.emplace_back(v.size(), 0.0);
  }

  AdaBeliefOptions o{.lr = 1e-2};
  AdaBelief opt(params, o);
  weft::set_logs("optim");
  for (int t = 1; t <= 5; ++t) {
    opt.step(grads);  // one kernel for the three tensors
    weft::set_logs("");
    const auto [b1, b2] = o.betas;
    for (std::size_t k = 0; k < shapes.size(); ++k) {
      const std::vector<float> g = grads[k].to_vector();
      for (std::size_t i = 0; i < g.size(); ++i) {
        m[k][i] = b1 * m[k][i] + (1 - b1) * g[i];
        s[k][i] = b2 * s[k][i] + (1 - b2) * (g[i] - m[k][i]) * (g[i] - m[k][i]) + o.eps;
        p[k][i] -= o.lr / (1 - std::pow(b1, t)) * m[k][i] / (std::sqrt(s[k][i] / (1 - std::pow(b2, t))) + o.eps);
      }
    }
  }
  // float32 against double after 5 steps: p (|p| up to ~4) is rounded to float32 at each step and
  // each update (~lr) carries a few float32 roundings: ~1e-6 of 1 + |p|.
  double worst = 0;
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    const std::vector<float> got = params[k].to_vector();
    for (std::size_t i = 0; i < got.size(); ++i)
      worst = std::max(worst, std::fabs(got[i] - p[k][i]) / (1 + std::fabs(p[k][i])));
  }
  std::printf("AdaBelief, 5 steps over %zu tensors: max |difference| / (1 + |p|) to a double loop %.2e\n", shapes.size(), worst);
  if (!(worst < 1e-5)) {
    std::fprintf(stderr, "custom_optimizer: AdaBelief disagrees with the reference\n");
    return 1;
  }
  return 0;
}

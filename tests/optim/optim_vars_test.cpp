// SPDX-License-Identifier: MIT
/// @file cpu: optimizers over ad::Vars (step() reads each grad() at the step, zero_grad() is one
/// kernel), parameter groups (one kernel each, options per group), stale gradient lists, and the
/// Storage versions a step counts.
#include <weft/optim/optim.hpp>

#include <cmath>

#include "error_check.hpp"
#include "log_capture.hpp"
#include "optim_lists.hpp"
#include "reference.hpp"

using namespace weft_test;
using weft::TensorList;
namespace optim = weft::optim;
namespace ad = weft::ad;

namespace {

Tensor<float> random_tensor(Rng& rng, const Shape& s) {
  return random_contiguous<float>(rng, s, Domain{0.1, 2.0, false, true});
}
std::vector<ad::Var<float>> random_params(Rng& rng, const std::vector<Shape>& shapes) {
  std::vector<ad::Var<float>> vars;
  for (const Shape& s : shapes) vars.push_back(ad::param(random_tensor(rng, s)));
  return vars;
}
/// Tensors holding copies of the Vars' values.
TensorList<float> copies(const std::vector<ad::Var<float>>& vars) {
  TensorList<float> list;
  for (const auto& v : vars) list.push_back(v.value().clone());
  return list;
}
using weft_test::list_values;  // the lists' overload beside the Vars' below
/// The elements of each Var's value.
std::vector<std::vector<float>> list_values(const std::vector<ad::Var<float>>& vars) {
  std::vector<std::vector<float>> out;
  for (const auto& v : vars) out.push_back(v.value().to_vector());
  return out;
}
std::size_t fused_kernels(const std::string& log) {
  std::size_t kernels = 0;
  for (std::size_t at = log.find("[weft:fusion] fused"); at != std::string::npos; at = log.find("[weft:fusion] fused", at + 1))
    ++kernels;
  return kernels;
}

/// torch.optim.AdamW in double, element by element, the test's independent reference.
struct AdamWReference {
  double lr, b1, b2, eps, wd;
  std::vector<std::vector<double>> p, m, v;
  int t = 0;
  explicit AdamWReference(const std::vector<std::vector<float>>& p0, const optim::AdamWOptions& o)
      : lr(o.lr), b1(o.betas.first), b2(o.betas.second), eps(o.eps), wd(o.weight_decay) {
    for (const auto& x : p0) {
      p.emplace_back(x.begin(), x.end());
      m.emplace_back(x.size(), 0.0);
      v.emplace_back(x.size(), 0.0);
    }
  }
  void step(const std::vector<std::vector<float>>& g) {
    ++t;
    for (std::size_t k = 0; k < p.size(); ++k)
      for (std::size_t i = 0; i < p[k].size(); ++i) {
        m[k][i] = b1 * m[k][i] + (1 - b1) * g[k][i];
        v[k][i] = b2 * v[k][i] + (1 - b2) * g[k][i] * g[k][i];
        p[k][i] = p[k][i] * (1 - lr * wd) -
                  lr / (1 - std::pow(b1, t)) * m[k][i] / (std::sqrt(v[k][i]) / std::sqrt(1 - std::pow(b2, t)) + eps);
      }
  }
  /// max |got - p| / (1 + |p|).
  double error(const std::vector<std::vector<float>>& got) const {
    double worst = 0;
    for (std::size_t k = 0; k < p.size(); ++k)
      for (std::size_t i = 0; i < p[k].size(); ++i)
        worst = std::max(worst, std::fabs(got[k][i] - p[k][i]) / (1 + std::fabs(p[k][i])));
    return worst;
  }
};

}  // namespace

TEST_SUITE("cpu") {
TEST_CASE("optimizers over ad::Vars: step() reads every grad() at the step, as the tensor-list step") {
  WEFT_TEST_RNG(rng);
  std::vector<ad::Var<float>> w = random_params(rng, kOptimShapes);
  TensorList<float> p = copies(w);
  const optim::AdamWOptions o{.lr = 1e-2, .weight_decay = 0.1};
  optim::AdamW opt(w, o);  // CTAD: AdamW<float>
  optim::AdamW list_opt(p, o);
  AdamWReference reference(list_values(w), o);
  for (int step = 1; step <= 4; ++step) {
    CAPTURE(step);
    TensorList<float> g;
    for (const Shape& s : kOptimShapes) g.push_back(random_tensor(rng, s));
    for (std::size_t k = 0; k < w.size(); ++k) {
      // Odd steps write the gradient in place; even ones give grad() new elements (a moved-in
      // tensor), which step() must read, not the buffer it saw before.
      if (step % 2) w[k].grad() = g[k];
      else w[k].grad() = weft::eval(g[k] * 1.0);
    }
    opt.step();
    list_opt.step(g);
    CHECK(list_values(w) == list_values(p));  // the same kernel
    reference.step(list_values(g));
    CHECK(reference.error(list_values(w)) < 1e-5);
  }
  CHECK(opt.step_count() == 4);
}

TEST_CASE("optimizers over ad::Vars: zero_grad() fills every grad() with 0 in one kernel and keeps the buffers") {
  WEFT_TEST_RNG(rng);
  std::vector<ad::Var<float>> w = random_params(rng, kOptimShapes);
  optim::SGD opt(w, {.lr = 0.1});
  {
    LogCapture capture;
    weft::set_logs("+fusion");
    opt.zero_grad();  // no grad() made yet: they are zeros already, nothing runs
    weft::set_logs("");
    CHECK(fused_kernels(capture.text()) == 0);
  }
  std::vector<const void*> buffers;
  for (auto& v : w) {
    v.grad() = random_tensor(rng, v.shape());
    buffers.push_back(v.grad().data());
  }
  LogCapture capture;
  weft::set_logs("+fusion");
  opt.zero_grad();
  weft::set_logs("");
  INFO(capture.text());
  CHECK(fused_kernels(capture.text()) == 1);
  for (std::size_t k = 0; k < w.size(); ++k) {
    CHECK(w[k].grad().data() == buffers[k]);
    for (float x : w[k].grad().to_vector()) CHECK(x == 0.0f);
  }
  // A step on zero gradients leaves SGD's parameters as they are.
  const auto before = list_values(w);
  opt.step();
  CHECK(list_values(w) == before);
}

TEST_CASE("optimizers over ad::Vars: every optimizer deduces its dtype and steps") {
  WEFT_TEST_RNG(rng);
  std::vector<ad::Var<double>> w;
  for (const Shape& s : kOptimShapes) w.push_back(ad::param(random_contiguous<double>(rng, s, Domain{0.1, 2.0, false, true})));
  optim::SGD sgd(w);
  optim::Adam adam(w);
  optim::AdamW adamw(w, {.lr = 1e-2});
  optim::Adagrad adagrad(w);
  optim::RMSprop rmsprop(w);
  optim::Lion lion(w);
  static_assert(std::is_same_v<decltype(sgd), optim::SGD<double>>);
  static_assert(std::is_same_v<decltype(adam), optim::Adam<double>>);
  static_assert(std::is_same_v<decltype(adamw), optim::AdamW<double>>);
  static_assert(std::is_same_v<decltype(adagrad), optim::Adagrad<double>>);
  static_assert(std::is_same_v<decltype(rmsprop), optim::RMSprop<double>>);
  static_assert(std::is_same_v<decltype(lion), optim::Lion<double>>);
  for (auto& v : w) v.grad() = 1.0;
  const std::vector<double> before = w[0].value().to_vector();
  lion.step();  // lr 1e-4, sign(g) = 1: p -= 1e-4
  const std::vector<double> after = w[0].value().to_vector();
  for (std::size_t i = 0; i < before.size(); ++i) CHECK(after[i] == doctest::Approx(before[i] - 1e-4).epsilon(1e-12));
}

TEST_CASE("parameter groups: each group steps with its own options, in one kernel each") {
  WEFT_TEST_RNG(rng);
  std::vector<ad::Var<float>> decay = random_params(rng, {Shape{4, 3}, Shape{7}}),
                              no_decay = random_params(rng, {Shape{3}, Shape{2, 2}});
  TensorList<float> pd = copies(decay), pn = copies(no_decay);
  optim::AdamW opt({{decay, {.lr = 1e-2, .weight_decay = 0.1}}, {no_decay, {.lr = 3e-2, .weight_decay = 0.0}}});
  static_assert(std::is_same_v<decltype(opt), optim::AdamW<float>>);
  optim::AdamW alone_d(pd, {.lr = 1e-2, .weight_decay = 0.1}), alone_n(pn, {.lr = 3e-2, .weight_decay = 0.0});
  CHECK(opt.num_param_groups() == 2);
  CHECK(opt.options(1).lr == 3e-2);
  CHECK(opt.options().weight_decay == 0.1);  // group 0
  CHECK(opt.params().size() == 4);
  for (int step = 1; step <= 3; ++step) {
    CAPTURE(step);
    TensorList<float> gd, gn;
    for (auto& v : decay) gd.push_back(v.grad() = random_tensor(rng, v.shape()));
    for (auto& v : no_decay) gn.push_back(v.grad() = random_tensor(rng, v.shape()));
    if (step == 3) opt.options(1).lr = alone_n.options().lr = 5e-3;  // a schedule sets one group's lr
    LogCapture capture;
    weft::set_logs("optim,+fusion");
    opt.step();
    weft::set_logs("");
    alone_d.step(gd);
    alone_n.step(gn);
    CHECK(list_values(decay) == list_values(pd));
    CHECK(list_values(no_decay) == list_values(pn));
    if (step > 1) {  // the first step also fills the state lists
      INFO(capture.text());
      CHECK(fused_kernels(capture.text()) == 2);
      CHECK(has(capture.text(), "optim::AdamW step " + std::to_string(step) +
                                    ": 2 groups on cpu, 4 tensors, 26 elements, float32 parameters, float32 state, 2 kernels"));
    }
  }
  // The state lists run over every parameter, group after group.
  CHECK(opt.state("exp_avg").size() == 4);
  CHECK(opt.state("exp_avg")[3].to_vector() == alone_n.state("exp_avg")[1].to_vector());
  CHECK(has(error_of([&] { opt.options(2); }), "optim::AdamW: no parameter group 2; this optimizer has 2"));
}

TEST_CASE("parameter groups: tensor groups take their gradients in group order; per-group state starts") {
  WEFT_TEST_RNG(rng);
  TensorList<float> a, b;
  for (const Shape& s : kOptimShapes) a.push_back(random_tensor(rng, s));
  b.push_back(random_tensor(rng, Shape{5}));
  TensorList<float> a1, b1;
  for (const auto& t : a) a1.push_back(t.clone());
  b1.push_back(b[0].clone());
  // Adagrad's sum starts at each group's initial_accumulator_value; SGD groups differ in momentum.
  optim::Adagrad<float> ada({{a, {.lr = 0.1, .initial_accumulator_value = 0.5}}, {b, {.lr = 0.2}}});
  optim::Adagrad alone_a(a1, {.lr = 0.1, .initial_accumulator_value = 0.5}), alone_b(b1, {.lr = 0.2});
  CHECK(ada.state("sum")[0].to_vector()[0] == 0.5f);
  CHECK(ada.state("sum")[3].to_vector()[0] == 0.0f);
  for (int step = 0; step < 3; ++step) {
    TensorList<float> g;
    for (const Shape& s : kOptimShapes) g.push_back(random_tensor(rng, s));
    g.push_back(random_tensor(rng, Shape{5}));
    ada.step(g);
    alone_a.step(TensorList<float>{g[0], g[1], g[2]});
    alone_b.step(TensorList<float>{g[3]});
  }
  CHECK(list_values(a) == list_values(a1));
  CHECK(list_values(b) == list_values(b1));
  CHECK(has(error_of([&] { ada.step(); }),
            "optim::Adagrad: step() uses each parameter's grad(), but parameter 0 (shape [4, 3]) was given as a tensor, "
            "which has none; pass its gradients to step(grads), or give the optimizer ad::param leaves"));
  CHECK(has(error_of([&] { ada.zero_grad(); }), "optim::Adagrad: zero_grad() uses each parameter's grad()"));
}

TEST_CASE("optimizers: bad parameters and groups are refused at construction") {
  WEFT_TEST_RNG(rng);
  std::vector<ad::Var<float>> w = random_params(rng, kOptimShapes);
  auto refused = [](auto&& f, const std::string& part) {
    const std::string text = error_of(f);
    INFO(text);
    CHECK(has(text, part));
  };
  refused([&] { optim::AdamW<float> opt(std::vector<optim::ParamGroup<float, optim::AdamWOptions>>{}); },
          "optim::AdamW: no parameter groups; pass at least one");
  refused([&] { optim::AdamW opt({{w, {}}, {std::vector<ad::Var<float>>{w[1]}, {}}}); },
          "optim::AdamW: parameters 1 and 3 are the same tensor; list each parameter once, in one group");
  refused([&] { optim::SGD opt(std::vector<ad::Var<float>>{w[0], ad::Var<float>()}); },
          "optim::SGD: parameter 1 is an empty (default-constructed) ad::Var");
  refused([&] { optim::SGD opt(std::vector<ad::Var<float>>{ad::Var<float>(random_tensor(rng, Shape{3}))}); },
          "optim::SGD: parameter 0 (shape [3]) is an ad::Var that requires no gradient; optimizers update leaves "
          "made by ad::param");
  auto computed = std::make_shared<ad::detail::Node<float>>();
  computed->value = random_tensor(rng, Shape{2});
  computed->requires_grad = true;  // an op's result: not a leaf
  refused([&] { optim::SGD opt(std::vector<ad::Var<float>>{ad::Var<float>(computed)}); },
          "optim::SGD: parameter 0 (shape [2]) is computed by an op; optimizers update leaves made by ad::param");
  refused([&] { optim::AdamW opt({{w, {}}, {random_params(rng, {Shape{2}}), {.lr = -1.0}}}); },
          "optim::AdamW: invalid lr -1: it must be >= 0");
}

TEST_CASE("optimizers: a gradient list whose tensor was reassigned or destroyed is refused, not stepped on") {
  WEFT_TEST_RNG(rng);
  TensorList<float> p;
  for (const Shape& s : kOptimShapes) p.push_back(random_tensor(rng, s));
  optim::AdamW opt(p, {.lr = 1e-2});
  Tensor<float> g0 = random_tensor(rng, kOptimShapes[0]), g1 = random_tensor(rng, kOptimShapes[1]),
                g2 = random_tensor(rng, kOptimShapes[2]);
  TensorList<float> grads{g0, g1, g2};
  opt.step(grads);
  g1 = g1 * 0.5;  // written in place: the list shows the new values
  opt.step(grads);
  const auto before = list_values(p);
  const auto m_before = list_values(opt.state("exp_avg"));
  g1 = weft::eval(g1 * 0.5);  // new elements: the list still shows the old ones
  const std::string text = error_of([&] { opt.step(grads); });
  INFO(text);
  CHECK(has(text, "optim::AdamW: gradient 1 (shape [7]) is stale: the tensor the gradient list was built from has "
                  "since been reassigned (`g = weft::eval(...)` moves other elements into g) or destroyed"));
  CHECK(has(text, "build the list after assigning, or give the optimizer ad::param leaves and call step()"));
  CHECK(list_values(p) == before);
  CHECK(list_values(opt.state("exp_avg")) == m_before);
  CHECK(opt.step_count() == 2);

  TensorList<float> from_scope = [&] {  // its tensors are destroyed with the lambda's scope
    Tensor<float> a = random_tensor(rng, kOptimShapes[0]), b = random_tensor(rng, kOptimShapes[1]), c = random_tensor(rng, kOptimShapes[2]);
    return TensorList<float>{a, b, c};
  }();
  CHECK(has(error_of([&] { opt.step(from_scope); }), "optim::AdamW: gradient 0 (shape [4, 3]) is stale"));

  // Lists that own their tensors hold the only reference legitimately: no error.
  std::vector<Tensor<float>> owned;
  for (const Shape& s : kOptimShapes) owned.push_back(random_tensor(rng, s));
  opt.step(TensorList<float>(std::move(owned)));
  TensorList<float> pushed;
  for (const Shape& s : kOptimShapes) pushed.push_back(random_tensor(rng, s));
  opt.step(pushed);
  CHECK(opt.step_count() == 4);
}

TEST_CASE("optimizers: a step counts one write in each parameter's and state tensor's Storage version") {
  WEFT_TEST_RNG(rng);
  std::vector<ad::Var<float>> w = random_params(rng, kOptimShapes);
  optim::AdamW opt(w, {.lr = 1e-2});
  for (auto& v : w) v.grad() = random_tensor(rng, v.shape());
  opt.step();
  std::vector<std::uint64_t> p0, m0, g0;
  for (std::size_t k = 0; k < w.size(); ++k) {
    p0.push_back(w[k].value().storage()->version());
    m0.push_back(opt.state("exp_avg")[k].storage()->version());
    g0.push_back(w[k].grad().storage()->version());
  }
  opt.step();
  for (std::size_t k = 0; k < w.size(); ++k) {
    CHECK(w[k].value().storage()->version() == p0[k] + 1);
    CHECK(opt.state("exp_avg")[k].storage()->version() == m0[k] + 1);
    CHECK(w[k].grad().storage()->version() == g0[k]);  // read, not written
  }
}
}

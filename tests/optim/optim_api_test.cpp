// SPDX-License-Identifier: MIT
/// @file cpu: optimizer API around the update: option and input checks (nothing written on error),
/// state access for checkpoints, GradScale skipping on the host, the `optim` log.
#include <weft/optim/optim.hpp>

#include "error_check.hpp"
#include "log_capture.hpp"
#include "optim_lists.hpp"
#include "reference.hpp"

using namespace weft_test;
using weft::TensorList;
namespace optim = weft::optim;


TEST_SUITE("cpu") {
TEST_CASE("optimizers: invalid options throw weft::Error naming the optimizer and the option") {
  WEFT_TEST_RNG(rng);
  TensorList<float> p = random_list<float>(rng, kOptimShapes);
  auto has = [](const std::string& text, const char* part) {
    INFO(text);
    CHECK(text.find(part) != std::string::npos);
  };
  has(error_of([&] { optim::SGD sgd(p, {.lr = -0.1}); }), "optim::SGD: invalid lr -0.1: it must be >= 0");
  has(error_of([&] { optim::SGD sgd(p, {.lr = 0.1, .nesterov = true}); }), "nesterov needs momentum > 0 and dampening = 0");
  has(error_of([&] { optim::SGD sgd(p, {.momentum = 0.9, .dampening = 0.1, .nesterov = true}); }), "dampening 0.1");
  has(error_of([&] { optim::AdamW adamw(p, {.betas = {0.9, 1.0}}); }), "optim::AdamW: invalid betas.second 1: it must be in [0, 1)");
  has(error_of([&] { optim::Adam adam(p, {.betas = {-0.1, 0.99}}); }), "optim::Adam: invalid betas.first -0.1");
  has(error_of([&] { optim::Adam adam(p, {.eps = -1e-8}); }), "invalid eps");
  has(error_of([&] { optim::Adam adam(p, {.weight_decay = -0.01}); }), "invalid weight_decay");
  has(error_of([&] { optim::Adagrad adagrad(p, {.lr_decay = -1.0}); }), "optim::Adagrad: invalid lr_decay");
  has(error_of([&] { optim::Adagrad adagrad(p, {.initial_accumulator_value = -1.0}); }), "initial_accumulator_value");
  has(error_of([&] { optim::RMSprop rmsprop(p, {.alpha = -0.5}); }), "optim::RMSprop: invalid alpha");
  has(error_of([&] { optim::RMSprop rmsprop(p, {.momentum = -0.5}); }), "invalid momentum");
  has(error_of([&] { optim::Lion lion(p, {.betas = {0.9, 1.5}}); }), "optim::Lion: invalid betas.second 1.5");

  // Options are checked again at every step (a schedule may set them): nothing is written.
  TensorList<float> g = random_list<float>(rng, kOptimShapes);
  optim::AdamW adamw(p, {.lr = 1e-2});
  adamw.step(g);
  const auto p_before = list_values(p), m_before = list_values(adamw.state("exp_avg"));
  adamw.options().lr = -1.0;
  has(error_of([&] { adamw.step(g); }), "optim::AdamW: invalid lr -1");
  CHECK(list_values(p) == p_before);
  CHECK(list_values(adamw.state("exp_avg")) == m_before);
  CHECK(adamw.step_count() == 1);
  adamw.options().lr = 1e-2;
  adamw.options().master_weights = true;
  has(error_of([&] { adamw.step(g); }), "master_weights keeps float32 copies of 16-bit parameters, but the parameters are float32");
  CHECK(list_values(p) == p_before);
}

TEST_CASE("optimizers: bad gradients and GradScale are refused before anything is written") {
  WEFT_TEST_RNG(rng);
  TensorList<float> p = random_list<float>(rng, kOptimShapes);
  optim::AdamW adam(p, {.lr = 1e-2});
  adam.step(random_list<float>(rng, kOptimShapes));
  const auto p_before = list_values(p), v_before = list_values(adam.state("exp_avg_sq"));
  auto refused = [&](auto&& f, const char* part) {
    const std::string text = error_of(f);
    INFO(text);
    CHECK(text.find("weft::optim::AdamW: ") == 0);
    CHECK(text.find(part) != std::string::npos);
    CHECK(list_values(p) == p_before);
    CHECK(list_values(adam.state("exp_avg_sq")) == v_before);
    CHECK(adam.step_count() == 1);
  };
  refused([&] { adam.step(random_list<float>(rng, {Shape{4, 3}, Shape{7}})); }, "2 gradients for 3 parameters");
  refused([&] { adam.step(random_list<float>(rng, {Shape{4, 3}, Shape{8}, Shape{2, 2, 2}})); },
          "gradient 1 has shape [8] but parameter 1 has shape [7]");
  const Domain d{0.1, 2.0};
  TensorList<float> strided{random_contiguous<float>(rng, Shape{3, 4}, d).transpose(0, 1),
                            random_contiguous<float>(rng, Shape{7}, d), random_contiguous<float>(rng, Shape{2, 2, 2}, d)};
  refused([&] { adam.step(strided); }, "gradient 0 of shape [4, 3] has strides");
  TensorList<float> g = random_list<float>(rng, kOptimShapes);
  refused([&] { adam.step(g, optim::GradScale{weft::ones<float>({2}), weft::zeros<float>({1})}); },
          "GradScale.scale must hold one float32 element, got shape [2]");
  refused([&] { adam.step(g, optim::GradScale{weft::ones<float>({1}), Tensor<float>()}); },
          "GradScale.found_inf must hold one float32 element, got an empty tensor");
  CHECK(error_of([&] { adam.state("momentum_buffer"); }).find("no state named 'momentum_buffer'; this optimizer has: exp_avg, exp_avg_sq") !=
        std::string::npos);
}

TEST_CASE("optimizers: GradScale unscales on the host path and skips a step with found_inf set") {
  WEFT_TEST_RNG(rng);
  TensorList<float> p1 = random_list<float>(rng, kOptimShapes), p2 = random_list<float>(rng, kOptimShapes);
  p2 = p1;  // same values, separate storage
  optim::AdamW a(p1, {.lr = 1e-2}), b(p2, {.lr = 1e-2});
  std::int64_t kernel_types = -1;
  const Tensor<float> scale = weft::full<float>({1}, 256.0f), clear = weft::zeros<float>({1}),
                      overflow = weft::ones<float>({1});
  for (int step = 0; step < 4; ++step) {
    TensorList<float> g = random_list<float>(rng, kOptimShapes), scaled = random_list<float>(rng, kOptimShapes);
    scaled = g * 256.0;  // exact: a power of two
    a.step(g);
    b.step(scaled, optim::GradScale{scale, clear});
    CHECK(list_values(p1) == list_values(p2));  // the same kernel arithmetic after an exact unscale
    const auto before = list_values(p2);
    TensorList<float> nan = random_list<float>(rng, kOptimShapes);
    nan = std::numeric_limits<float>::quiet_NaN() + 0.0 * nan;
    b.step(nan, optim::GradScale{scale, overflow});
    CHECK(list_values(p2) == before);
    if (step == 0) kernel_types = weft::kernel_types_run();
  }
  CHECK(weft::kernel_types_run() == kernel_types);
  CHECK(a.step_count() == 4);
  CHECK(b.step_count() == 4);
}

TEST_CASE("optimizers: state and step count restore a checkpoint exactly") {
  WEFT_TEST_RNG(rng);
  TensorList<float> p = random_list<float>(rng, kOptimShapes);
  std::vector<TensorList<float>> grads;
  for (int i = 0; i < 5; ++i) grads.push_back(random_list<float>(rng, kOptimShapes));
  optim::AdamW opt(p, {.lr = 1e-2, .amsgrad = true});
  for (int i = 0; i < 3; ++i) opt.step(grads[i]);
  // save
  TensorList<float> saved_p = random_list<float>(rng, kOptimShapes);
  saved_p = p;
  std::vector<TensorList<float>> saved_state;
  for (const std::string& name : opt.state_names()) {
    saved_state.push_back(random_list<float>(rng, kOptimShapes));
    saved_state.back() = opt.state(name);
  }
  const std::int64_t saved_steps = opt.step_count();
  CHECK(saved_steps == 3);
  for (int i = 3; i < 5; ++i) opt.step(grads[i]);
  const auto expected = list_values(p);
  // restore into a fresh optimizer (states are made by its first step; make them, then overwrite)
  TensorList<float> q = random_list<float>(rng, kOptimShapes);
  optim::AdamW restored(q, opt.options());
  restored.step(grads[0]);
  q = saved_p;
  std::size_t i = 0;
  for (const std::string& name : opt.state_names()) restored.state(name) = saved_state[i++];
  restored.set_step_count(saved_steps);
  for (int k = 3; k < 5; ++k) restored.step(grads[k]);
  CHECK(list_values(q) == expected);
  CHECK(restored.step_count() == 5);
}

TEST_CASE("optimizers: WEFT_LOGS=optim logs every step and every skip") {
  WEFT_TEST_RNG(rng);
  TensorList<float> p = random_list<float>(rng, kOptimShapes);
  optim::AdamW adam(p);
  LogCapture capture;
  weft::set_logs("optim");
  adam.step(random_list<float>(rng, kOptimShapes));
  adam.step(random_list<float>(rng, kOptimShapes), optim::GradScale{weft::ones<float>({1}), weft::ones<float>({1})});
  weft::set_logs("");
  const std::string text = capture.text();
  INFO(text);
  CHECK(text.find("[weft:optim] optim::AdamW step 1: 1 group on cpu, 3 tensors, 27 elements, float32 parameters, "
                  "float32 state, 1 kernel") != std::string::npos);
  CHECK(text.find("[weft:optim] optim::AdamW step skipped: found_inf is set (step count stays 1)") != std::string::npos);
}

TEST_CASE("optimizers: the first step fills each state list with one foreach kernel, whatever the parameter count") {
  // +fusion logs every kernel launch: AdamW's first step runs one fill per state list (exp_avg,
  // exp_avg_sq) and the update, 3 kernels for 3 or 12 parameters.
  WEFT_TEST_RNG(rng);
  for (int copies : {1, 4}) {
    std::vector<Shape> shapes;
    for (int c = 0; c < copies; ++c) shapes.insert(shapes.end(), kOptimShapes.begin(), kOptimShapes.end());
    TensorList<float> p = random_list<float>(rng, shapes);
    TensorList<float> g = random_list<float>(rng, shapes);
    {  // freed NaN buffers of the state's sizes: the host pool hands them to the state lists
      std::vector<Tensor<float>> poison;
      for (const Shape& s : shapes) poison.push_back(weft::full<float>(s, NAN));
      for (const Shape& s : shapes) poison.push_back(weft::full<float>(s, NAN));
    }
    optim::AdamW adam(p);
    LogCapture capture;
    weft::set_logs("+fusion");
    adam.step(g);
    weft::set_logs("");
    const std::string text = capture.text();
    INFO("parameters: ", shapes.size(), "\n", text);
    std::size_t kernels = 0;
    for (std::size_t at = text.find("[weft:fusion] fused"); at != std::string::npos;
         at = text.find("[weft:fusion] fused", at + 1))
      ++kernels;
    CHECK(kernels == 3);
    // From zero state: exp_avg = (1 - beta1) g, exp_avg_sq = (1 - beta2) g^2.
    REQUIRE(adam.state("exp_avg").size() == shapes.size());
    for (std::size_t k = 0; k < shapes.size(); ++k) {
      CHECK(weft::allclose(adam.state("exp_avg")[k], 0.1 * g[k], 1e-6, 0.0));
      CHECK(weft::allclose(adam.state("exp_avg_sq")[k], 0.001 * g[k] * g[k], 1e-6, 0.0));
    }
  }
}
}

// SPDX-License-Identifier: MIT
/// @file cpu: optimizer checkpoints: state(name) before the first step, state_dict() through a
/// safetensors file into a fresh optimizer continues bit-identically, and load_state_dict refuses
/// a dict that does not fit, listing every problem and writing nothing.
#include <weft/optim/optim.hpp>
#include <weft/io/safetensors.hpp>

#include <cmath>
#include <filesystem>
#include <functional>

#include "error_check.hpp"
#include "optim_lists.hpp"
#include "reference.hpp"

using namespace weft_test;
using weft::TensorList;
namespace optim = weft::optim;
namespace io = weft::io;

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("weft_optim_" + name + ".safetensors")).string();
}

/// Steps `make(params)` 3 times, saves its state_dict to a file, steps 3 more; a fresh optimizer
/// (other options, which the dict restores) on the saved parameters loads the file and steps the
/// same 3 gradients: parameters and state must be bit-identical.
template <class T = float, class Make>
void check_resume(Rng& rng, const std::string& name, Make make) {
  CAPTURE(name);
  TensorList<T> p = random_list<T>(rng, kOptimShapes);
  std::vector<TensorList<T>> grads;
  for (int i = 0; i < 6; ++i) grads.push_back(random_list<T>(rng, kOptimShapes));
  auto run = make(p, 1.0);
  for (int i = 0; i < 3; ++i) run.step(grads[i]);
  const std::string path = temp_path(name);
  io::save_safetensors(path, run.state_dict());
  TensorList<T> saved_p = clone_list(p);
  for (int i = 3; i < 6; ++i) run.step(grads[i]);

  auto resumed = make(saved_p, 7.0);  // lr 7x: the dict's options replace it
  resumed.load_state_dict(io::SafeTensors(path));
  std::filesystem::remove(path);
  CHECK(resumed.step_count() == 3);
  CHECK(resumed.options().lr == run.options().lr);
  for (int i = 3; i < 6; ++i) resumed.step(grads[i]);
  CHECK(list_values(saved_p) == list_values(p));
  CHECK(resumed.state_names() == run.state_names());
  for (const std::string& s : run.state_names()) {
    CAPTURE(s);
    CHECK(list_values(resumed.state(s)) == list_values(run.state(s)));
  }
}

}  // namespace

TEST_SUITE("cpu") {
TEST_CASE("optimizers: state(name) on a fresh optimizer makes the list a checkpoint fills") {
  WEFT_TEST_RNG(rng);
  TensorList<float> p = random_list(rng, kOptimShapes), q = clone_list(p);
  std::vector<TensorList<float>> grads;
  for (int i = 0; i < 5; ++i) grads.push_back(random_list(rng, kOptimShapes));
  optim::AdamW opt(p, {.lr = 1e-2, .amsgrad = true});
  CHECK(opt.state_names() == std::vector<std::string>{"exp_avg", "exp_avg_sq", "max_exp_avg_sq"});
  for (int i = 0; i < 3; ++i) opt.step(grads[i]);
  std::vector<TensorList<float>> saved;
  for (const std::string& name : opt.state_names()) saved.push_back(clone_list(opt.state(name)));
  const TensorList<float> saved_p = clone_list(p);
  for (int i = 3; i < 5; ++i) opt.step(grads[i]);

  optim::AdamW fresh(saved_p, {.lr = 1e-2, .amsgrad = true});  // no step before restoring
  std::size_t i = 0;
  for (const std::string& name : fresh.state_names()) fresh.state(name) = saved[i++];
  fresh.set_step_count(3);
  for (int k = 3; k < 5; ++k) fresh.step(grads[k]);
  CHECK(list_values(saved_p) == list_values(p));

  // Adagrad's sum starts at initial_accumulator_value; SGD without momentum has no state.
  optim::Adagrad ada(p, {.initial_accumulator_value = 0.25});
  CHECK(ada.state("sum")[1].to_vector() == std::vector<float>(7, 0.25f));
  optim::SGD sgd(p, {.lr = 0.1});
  CHECK(sgd.state_names().empty());
  CHECK(has(error_of([&] { sgd.state("momentum_buffer"); }),
            "optim::SGD: no state named 'momentum_buffer'; this optimizer has: none"));
  CHECK(has(error_of([&] { opt.state("exp_avg_sqr"); }),
            "optim::AdamW: no state named 'exp_avg_sqr'; this optimizer has: exp_avg, exp_avg_sq, max_exp_avg_sq"));
}

TEST_CASE("optimizers: state_dict() through a safetensors file resumes bit-identically") {
  WEFT_TEST_RNG(rng);
  check_resume(rng, "adamw", [](TensorList<float>& p, double lr) {
    return optim::AdamW(p, {.lr = 1e-2 * lr, .weight_decay = 0.05, .amsgrad = true});
  });
  check_resume(rng, "adam", [](TensorList<float>& p, double lr) {
    return optim::Adam(p, {.lr = 1e-2 * lr, .weight_decay = 0.01, .maximize = true});
  });
  check_resume(rng, "sgd", [](TensorList<float>& p, double lr) {
    return optim::SGD(p, {.lr = 1e-2 * lr, .momentum = 0.9, .weight_decay = 0.01, .nesterov = true});
  });
  check_resume(rng, "adagrad", [](TensorList<float>& p, double lr) {
    return optim::Adagrad(p, {.lr = 1e-2 * lr, .lr_decay = 0.01, .initial_accumulator_value = 0.1});
  });
  check_resume(rng, "rmsprop", [](TensorList<float>& p, double lr) {
    return optim::RMSprop(p, {.lr = 1e-2 * lr, .momentum = 0.5, .centered = true});
  });
  check_resume(rng, "lion", [](TensorList<float>& p, double lr) {
    return optim::Lion(p, {.lr = 1e-3 * lr, .weight_decay = 0.1});
  });
  check_resume<double>(rng, "adamw_f64", [](TensorList<double>& p, double lr) {
    return optim::AdamW(p, {.lr = 1e-2 * lr});
  });
  check_resume(rng, "groups", [](TensorList<float>& p, double lr) {
    return optim::AdamW<float>({{TensorList<float>{p[0], p[1]}, {.lr = 1e-2 * lr, .weight_decay = 0.1}},
                                {TensorList<float>{p[2]}, {.lr = 3e-2 * lr, .weight_decay = 0.0}}});
  });
}

TEST_CASE("optimizers: a state dict holds the step, the groups' options and the state lists, as a snapshot") {
  WEFT_TEST_RNG(rng);
  TensorList<float> a = random_list(rng, {Shape{3}}), b = random_list(rng, {Shape{2, 2}});
  optim::AdamW<float> opt({{a, {.lr = 1e-3}}, {b, {.lr = 2e-3, .betas = {0.8, 0.9}}}});
  const optim::StateDict fresh = opt.state_dict();
  std::vector<std::string> names;
  for (const io::NamedTensor& e : fresh) names.push_back(e.name);
  CHECK(names == std::vector<std::string>{"step", "param_groups.0.params", "param_groups.0.lr",
                                          "param_groups.0.betas.0", "param_groups.0.betas.1", "param_groups.0.eps",
                                          "param_groups.0.weight_decay", "param_groups.0.amsgrad",
                                          "param_groups.0.maximize", "param_groups.0.master_weights",
                                          "param_groups.1.params", "param_groups.1.lr", "param_groups.1.betas.0",
                                          "param_groups.1.betas.1", "param_groups.1.eps", "param_groups.1.weight_decay",
                                          "param_groups.1.amsgrad", "param_groups.1.maximize",
                                          "param_groups.1.master_weights"});
  opt.step(random_list(rng, {Shape{3}, Shape{2, 2}}));
  const optim::StateDict dict = opt.state_dict();
  CHECK(dict.size() == fresh.size() + 4);  // state.{0,1}.exp_avg, state.{0,1}.exp_avg_sq
  auto find = [&](const std::string& name) -> const io::NamedTensor& {
    for (const io::NamedTensor& e : dict)
      if (e.name == name) return e;
    FAIL("no entry ", name);
    return dict[0];
  };
  CHECK(find("state.1.exp_avg_sq").tensor.shape() == Shape{2, 2});
  CHECK(find("param_groups.1.params").tensor.dtype() == weft::DType::int64);
  double betas0;
  std::memcpy(&betas0, find("param_groups.1.betas.0").tensor.bytes().data(), sizeof(double));
  CHECK(betas0 == 0.8);
  std::vector<float> m(3);
  std::memcpy(m.data(), find("state.0.exp_avg").tensor.bytes().data(), 3 * sizeof(float));
  opt.step(random_list(rng, {Shape{3}, Shape{2, 2}}));
  std::vector<float> m_later(3);
  std::memcpy(m_later.data(), find("state.0.exp_avg").tensor.bytes().data(), 3 * sizeof(float));
  CHECK(m == m_later);  // later steps do not change it
}

TEST_CASE("optimizers: loading a dict from before the first step restarts the state (SGD's first step copies d)") {
  WEFT_TEST_RNG(rng);
  TensorList<float> p = random_list(rng, kOptimShapes), q = clone_list(p);
  const optim::SGDOptions o{.lr = 0.1, .momentum = 0.9, .dampening = 0.5};
  optim::SGD reference(p, o), used(q, o);
  const optim::StateDict at_start = reference.state_dict();
  used.step(random_list(rng, kOptimShapes));
  used.step(random_list(rng, kOptimShapes));
  q = p;  // the parameters back too (they are the model's, not the optimizer's)
  used.load_state_dict(at_start);
  CHECK(used.step_count() == 0);
  CHECK(used.state_names() == std::vector<std::string>{"momentum_buffer"});  // declared, not made
  for (int i = 0; i < 3; ++i) {
    TensorList<float> g = random_list(rng, kOptimShapes);
    reference.step(g);
    used.step(g);
  }
  CHECK(list_values(p) == list_values(q));
  CHECK(list_values(used.state("momentum_buffer")) == list_values(reference.state("momentum_buffer")));
}

TEST_CASE("optimizers: bfloat16 parameters with master weights resume bit-identically") {
  WEFT_TEST_RNG(rng);
  check_resume<weft::bfloat16>(rng, "bf16_master", [](TensorList<weft::bfloat16>& p, double lr) {
    return optim::AdamW(p, {.lr = 1e-2 * lr, .master_weights = true});
  });
}

TEST_CASE("optimizers: load_state_dict lists every missing, unexpected or mis-shaped entry and writes nothing") {
  WEFT_TEST_RNG(rng);
  TensorList<float> p = random_list(rng, kOptimShapes);
  optim::AdamW opt(p, {.lr = 1e-2});
  opt.step(random_list(rng, kOptimShapes));
  const optim::StateDict good = opt.state_dict();
  opt.step(random_list(rng, kOptimShapes));
  const auto p_before = list_values(p), m_before = list_values(opt.state("exp_avg"));
  auto unchanged = [&] {
    CHECK(list_values(p) == p_before);
    CHECK(list_values(opt.state("exp_avg")) == m_before);
    CHECK(opt.step_count() == 2);
    CHECK(opt.options().lr == 1e-2);
  };
  auto without = [&](const std::string& name) {
    optim::StateDict d;
    for (const io::NamedTensor& e : good)
      if (e.name != name) d.push_back(e);
    return d;
  };
  auto refused = [&](const optim::StateDict& d, std::vector<std::string> parts) {
    const std::string text = error_of([&] { opt.load_state_dict(d); });
    INFO(text);
    CHECK(has(text, "optim::AdamW: load_state_dict: the state dict does not fit this optimizer; nothing was loaded"));
    for (const std::string& part : parts) CHECK(has(text, part));
    unchanged();
  };
  refused(without("state.2.exp_avg_sq"), {"missing (1): state.2.exp_avg_sq"});
  refused(without("step"), {"missing (1): step"});
  optim::StateDict extra = good;
  extra.push_back({"state.0.momentum_buffer", weft::zeros<float>(Shape{4, 3})});
  extra.push_back({"param_groups.1.lr", weft::zeros<double>(Shape{1})});
  refused(extra, {"unexpected (2): state.0.momentum_buffer; param_groups.1.lr"});
  optim::StateDict bad = without("state.1.exp_avg");
  bad.push_back({"state.1.exp_avg", weft::zeros<float>(Shape{8})});
  bad.push_back({"step", weft::zeros<std::int64_t>(Shape{1})});
  refused(bad, {"mis-shaped (1): state.1.exp_avg (float32 [8], expected float32 [7])", "given twice (1): step"});
  optim::StateDict wrong_dtype = without("state.1.exp_avg");
  wrong_dtype.push_back({"state.1.exp_avg", weft::zeros<double>(Shape{7})});
  refused(wrong_dtype, {"state.1.exp_avg (float64 [7], expected float32 [7])"});
  optim::StateDict negative = without("step");
  negative.push_back({"step", weft::full<std::int64_t>(Shape{1}, -3)});
  refused(negative, {"step (-3: negative)"});
  optim::StateDict regrouped = without("param_groups.0.params");
  regrouped.push_back({"param_groups.0.params", weft::from_vector<std::int64_t>({0, 2, 1}, Shape{3})});
  refused(regrouped, {"param_groups.0.params (parameter 2 at position 1, expected 1)"});
  // A dict of another optimizer: Adam's options fit, its state lists are unexpected for SGD.
  TensorList<float> q = random_list(rng, kOptimShapes);
  optim::SGD sgd(q, {.lr = 0.1});
  const std::string text = error_of([&] { sgd.load_state_dict(good); });
  INFO(text);
  CHECK(has(text, "unexpected (10): param_groups.0.betas.0; param_groups.0.betas.1; param_groups.0.eps; "
                  "param_groups.0.amsgrad; state.0.exp_avg;"));
  CHECK(has(text, "missing (3): param_groups.0.momentum; param_groups.0.dampening; param_groups.0.nesterov\n"));
  // Options that do not pass the optimizer's checks.
  optim::StateDict bad_lr = without("param_groups.0.lr");
  bad_lr.push_back({"param_groups.0.lr", weft::full<double>(Shape{1}, -1.0)});
  CHECK(has(error_of([&] { opt.load_state_dict(bad_lr); }), "optim::AdamW: invalid lr -1: it must be >= 0"));
  unchanged();
  // A file tensor of a dtype no state dict holds.
  const std::string path = temp_path("bf16_entry");
  io::save_safetensors(path, {{"step", weft::zeros<weft::bfloat16>(Shape{1})}});
  CHECK(has(error_of([&] { opt.load_state_dict(io::SafeTensors(path)); }),
            "optim::AdamW: load_state_dict: tensor 'step' has dtype bfloat16; an optimizer's state dict holds float32, "
            "float64 and int64 tensors"));
  std::filesystem::remove(path);
  unchanged();
  // The good dict loads, and the optimizer continues from it.
  opt.load_state_dict(good);
  CHECK(opt.step_count() == 1);
}
}

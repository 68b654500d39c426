// SPDX-License-Identifier: MIT
/// @file cpu: module initialization and dropout draw from the global generator: manual_seed reproduces a model and its dropout masks; an explicit seed leaves the global generator alone.
#include <cmath>
#include <cstdint>
#include <vector>

#include <weft/nn/modules.hpp>

#include "random_check.hpp"
#include "reference.hpp"

using namespace weft_test;
namespace ad = weft::ad;
namespace nn = weft::nn;

TEST_SUITE("cpu") {

TEST_CASE("nn modules: manual_seed then the same modules give the same values, drawn in order from the generator") {
  GlobalGeneratorScope restore;
  const std::uint64_t s = seed() ^ 0x11;
  INFO("random seed ", s);
  weft::manual_seed(s);
  nn::Linear<> a(5, 7);
  nn::Embedding<> e(6, 3);
  weft::manual_seed(s);
  nn::Linear<> b(5, 7);
  nn::Embedding<> f(6, 3);
  CHECK(a.weight.value().to_vector() == b.weight.value().to_vector());
  CHECK(a.bias.value().to_vector() == b.bias.value().to_vector());
  CHECK(e.weight.value().to_vector() == f.weight.value().to_vector());
  // The weight took counters 0..34 of the seed, the bias 35..41, the embedding 42..59: torch's
  // U(-1/sqrt(in), 1/sqrt(in)) of rand's draws (computed in float: a few float ulps of the double).
  weft::Generator g(s);
  const auto uw = values_of(weft::rand<float>(Shape{7, 5}, g)), ub = values_of(weft::rand<float>(Shape{7}, g));
  const auto z = values_of(weft::randn<float>(Shape{6, 3}, g));
  const double bound = 1 / std::sqrt(5.0);
  const auto w = values_of(a.weight.value()), bias = values_of(a.bias.value());
  for (std::size_t i = 0; i < uw.size(); ++i) CHECK(std::fabs(w[i] - (uw[i] * 2 - 1) * bound) <= 4 * 0x1p-24 * bound);
  for (std::size_t i = 0; i < ub.size(); ++i) CHECK(std::fabs(bias[i] - (ub[i] * 2 - 1) * bound) <= 4 * 0x1p-24 * bound);
  CHECK(values_of(e.weight.value()) == z);
  CHECK(weft::default_generator().offset() == 60);

  // A module given a seed draws from its own stream: the global generator does not move, and
  // its values do not depend on what was drawn before.
  nn::Linear<> c(5, 7, true, 99);
  CHECK(weft::default_generator().offset() == 60);
  weft::manual_seed(s + 1);
  CHECK(nn::Linear<>(5, 7, true, 99).weight.value().to_vector() == c.weight.value().to_vector());
  // Without a seed two modules in a row differ.
  nn::Linear<> d(5, 7), d2(5, 7);
  CHECK(d.weight.value().to_vector() != d2.weight.value().to_vector());
}

TEST_CASE("nn::dropout without a seed: the global generator's mask, replayed by manual_seed; training = false is x") {
  GlobalGeneratorScope restore;
  const std::uint64_t s = seed() ^ 0x12;
  INFO("random seed ", s);
  const double p = 0.3;
  const ad::Var<double> x = ad::param(weft::randn<double>(Shape{40, 50}, s + 5));
  weft::manual_seed(s);
  const ad::Var<double> y = nn::dropout(x, p);
  // Element i kept (scaled by 1 / (1 - p)) where u_i >= p, u the draw rand<float>(shape, s).
  const auto u = values_of(weft::rand<float>(Shape{40, 50}, s)), xv = values_of(x.value()), yv = values_of(y.value());
  double kept = 0;
  for (std::size_t i = 0; i < u.size(); ++i) {
    const double want = u[i] >= float(p) ? xv[i] / (1 - p) : 0.0;
    CHECK(std::fabs(yv[i] - want) <= 2 * std::numeric_limits<double>::epsilon() * std::fabs(want));
    kept += u[i] >= float(p);
  }
  CHECK(std::fabs(kept / 2000 - (1 - p)) < 5 * std::sqrt(p * (1 - p) / 2000));
  // The gradient flows through the kept elements: d sum(y) / dx = mask / (1 - p).
  weft::sum(y).backward();
  const auto gx = values_of(x.grad());
  for (std::size_t i = 0; i < u.size(); ++i) CHECK(gx[i] == (u[i] >= float(p) ? 1 / (1 - p) : 0.0));
  // The seeded form with the same seed draws the same mask; a second seedless call a new one.
  CHECK(values_of(nn::dropout(x, p, s).value()) == yv);
  CHECK(values_of(nn::dropout(x, p).value()) != yv);
  weft::manual_seed(s);
  CHECK(values_of(nn::dropout(x, p).value()) == yv);
  // Not training: x itself, nothing drawn; p is still checked (as torch's F.dropout).
  const std::uint64_t offset = weft::default_generator().offset();
  CHECK(values_of(nn::dropout(x, p, false).value()) == xv);
  CHECK(weft::default_generator().offset() == offset);
  CHECK_THROWS_WITH_AS(nn::dropout(x, 1.5, false), doctest::Contains("dropout probability has to be between 0 and 1, but got 1.5"),
                       weft::Error);
  CHECK_THROWS_WITH_AS(nn::dropout(x, -0.5), doctest::Contains("nn::dropout"), weft::Error);
  CHECK(weft::default_generator().offset() == offset);

  // nn::Dropout without a seed: the same draw as nn::dropout(x, p) after the same manual_seed.
  nn::Dropout<double> drop(p);
  weft::manual_seed(s);
  CHECK(values_of(drop(x).value()) == yv);
  nn::Dropout<double> seeded(p, 77);
  weft::manual_seed(s);
  CHECK(values_of(seeded(x).value()) != yv);
  CHECK(weft::default_generator().offset() == 0);  // a seeded Dropout draws from its own stream
}

TEST_CASE("nn::dropout of a tensor or an expression: the Var form's mask and values, one new tensor") {
  GlobalGeneratorScope restore;
  const std::uint64_t s = seed() ^ 0x13;
  INFO("random seed ", s);
  const double p = 0.4;
  const weft::Tensor<float> x = weft::randn<float>(Shape{33, 61}, s + 9);
  const auto u = values_of(weft::rand<float>(Shape{33, 61}, s)), xv = values_of(x);
  // Element i kept where u_i >= p, scaled by 1 / (1 - p) in float: within one rounding of the double.
  auto check_dropped = [&](const std::vector<double>& yv, const std::vector<double>& in) {
    std::int64_t wrong = 0;
    for (std::size_t i = 0; i < u.size(); ++i) {
      const double want = u[i] >= float(p) ? double(in[i]) / (1 - p) : 0.0;
      wrong += !(std::fabs(yv[i] - want) <= 2 * 0x1p-24 * std::fabs(want));
    }
    return wrong;
  };
  weft::manual_seed(s);
  const weft::Tensor<float> y = nn::dropout(x, p);
  CHECK(check_dropped(values_of(y), xv) == 0);
  CHECK(values_of(nn::dropout(x, p, s)) == values_of(y));  // the seeded form: the same draw
  // An expression is evaluated in the same kernel as the mask's where.
  const auto doubled = values_of(weft::eval(x * 2 + 1));
  CHECK(check_dropped(values_of(nn::dropout(x * 2 + 1, p, s)), doubled) == 0);
  // The Var form records the same values.
  const ad::Var<float> v = ad::param(x.clone());
  CHECK(values_of(nn::dropout(v, p, s).value()) == values_of(y));
  // p = 0, not training: x's values, nothing drawn; p = 1: zeros; p outside [0, 1]: an error, nothing drawn.
  const std::uint64_t offset = weft::default_generator().offset();
  CHECK(values_of(nn::dropout(x, p, false)) == xv);
  CHECK(values_of(nn::dropout(x, 0.0)) == xv);
  CHECK(weft::default_generator().offset() == offset);
  CHECK(values_of(nn::dropout(x, 1.0)) == std::vector<double>(xv.size(), 0.0));
  CHECK_THROWS_WITH_AS(nn::dropout(x, 1.5), doctest::Contains("weft::nn::dropout: dropout probability has to be between 0 and 1, but got 1.5"),
                       weft::Error);
  CHECK(weft::default_generator().offset() == offset);
}

}  // TEST_SUITE

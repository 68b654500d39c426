// SPDX-License-Identifier: MIT
/// @file An MLP (Linear, LayerNorm, GELU, Linear, cross-entropy) trained for 10 AdamW steps through autograd, modules and the optimizer over Vars, equal to torch's run step for step in float64 (tests/golden/make_mlp_golden.py).
#include <cmath>
#include <string>

#include <doctest/doctest.h>
#include <weft/autograd.hpp>
#include <weft/io.hpp>

#ifndef WEFT_GOLDEN_DIR
#error "tests/meson.build defines WEFT_GOLDEN_DIR (the tests/golden directory)"
#endif

namespace {

namespace nn = weft::nn;
namespace ad = weft::ad;
using weft::Tensor;

struct Mlp : nn::Module<double> {
  nn::Linear<double> fc1{6, 16};
  nn::LayerNorm<double> ln{16};
  nn::Linear<double> fc2{16, 4};
  Mlp() {
    register_module("fc1", &Mlp::fc1);
    register_module("ln", &Mlp::ln);
    register_module("fc2", &Mlp::fc2);
  }
  ad::Var<double> forward(const ad::Var<double>& x) override { return fc2(ad::Var<double>(weft::gelu(ln(fc1(x))))); }
};

/// The largest |a - b| / (|b| + 1e-300) over the elements.
double max_relative(const weft::TensorView<const double>& a, const weft::TensorView<const double>& b) {
  REQUIRE(a.shape() == b.shape());
  const Tensor<double> ca = weft::eval(a), cb = weft::eval(b);
  double worst = 0;
  for (std::int64_t i = 0; i < ca.numel(); ++i)
    worst = std::max(worst, std::abs(ca.data()[i] - cb.data()[i]) / (std::abs(cb.data()[i]) + 1e-300));
  return worst;
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("autograd: an MLP trained 10 AdamW steps equals torch step for step in float64") {
  weft::io::SafeTensors golden(std::string(WEFT_GOLDEN_DIR) + "/nn/mlp_train.safetensors");
  Mlp net;
  nn::StateDict init;
  for (const auto& [name, param] : net.named_parameters()) init.push_back({name, golden.get<double>("init." + name)});
  net.load_state_dict(init);
  weft::optim::AdamWOptions o;
  o.lr = 0.02;
  o.betas = {0.9, 0.99};
  o.eps = 1e-8;
  o.weight_decay = 0.05;
  weft::optim::AdamW<double> opt(net.parameters(), o);
  const weft::TensorView<const double> losses = golden.get<double>("loss");
  // Both runs do the same float64 arithmetic in other orders (sums, GEMM blocking): they differ
  // by a few ulps per op, which ten steps grow to ~1e-13 relative; a wrong gradient or update
  // differs in the leading digits.
  for (int k = 0; k < 10; ++k) {
    const ad::Var<double> x(Tensor<double>(golden.get<double>("x." + std::to_string(k))));
    const Tensor<std::int64_t> targets(golden.get<std::int64_t>("targets." + std::to_string(k)));
    opt.zero_grad();
    ad::Var<double> loss = nn::cross_entropy(net(x), targets);
    loss.backward();
    opt.step();
    INFO("step ", k);
    CHECK(loss.value().item() == doctest::Approx(losses.contiguous().data()[k]).epsilon(1e-11));
  }
  // (Not a structured binding: clang cannot capture one in INFO's lambda under OpenMP.)
  for (const auto& named : net.named_parameters()) {
    INFO(named.first);
    CHECK(max_relative(named.second.value().view(), golden.get<double>("final." + named.first)) < 1e-9);
  }
}

}  // TEST_SUITE

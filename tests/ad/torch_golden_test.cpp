// SPDX-License-Identifier: MIT
/// @file Autograd of the dense ops against torch.autograd in float64 (tests/golden/make_autograd_golden.py): the gradients of sum(op(inputs) * dy).
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <weft/autograd.hpp>
#include <weft/io.hpp>

#ifndef WEFT_GOLDEN_DIR
#error "tests/meson.build defines WEFT_GOLDEN_DIR (the tests/golden directory)"
#endif

namespace {

namespace ad = weft::ad;
using weft::Tensor;
using VarD = ad::Var<double>;
using Op = std::function<VarD(const std::vector<VarD>&, const Tensor<std::int64_t>&)>;

const weft::io::SafeTensors& golden() {
  static const weft::io::SafeTensors file(std::string(WEFT_GOLDEN_DIR) + "/ad/dense_ops.safetensors");
  return file;
}

/// Runs `op` on the case's inputs, backpropagates its dy, and compares each input's gradient
/// with torch's. Both are float64 sums of the same terms in other orders: they differ by a few
/// ulps of the terms' magnitude, bounded here by 1e-12 (max |grad| + 1); a wrong formula differs
/// by the gradient's own size.
void check_case(const std::string& name, int inputs, const Op& op) {
  INFO("case ", name);
  std::vector<VarD> xs;
  for (int k = 0; k < inputs; ++k)
    xs.push_back(ad::param(Tensor<double>(golden().get<double>(name + ".in" + std::to_string(k)))));
  const Tensor<std::int64_t> idx = golden().contains(name + ".idx")
                                       ? Tensor<std::int64_t>(golden().get<std::int64_t>(name + ".idx"))
                                       : Tensor<std::int64_t>();
  VarD y = op(xs, idx);
  const Tensor<double> dy(golden().get<double>(name + ".dy"));
  REQUIRE(y.shape() == dy.shape());
  y.backward(dy);
  for (int k = 0; k < inputs; ++k) {
    const Tensor<double> expected(golden().get<double>(name + ".grad" + std::to_string(k)));
    const std::vector<double> got = xs[std::size_t(k)].grad().to_vector(), want = expected.to_vector();
    REQUIRE(got.size() == want.size());
    double scale = 1, worst = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      scale = std::max(scale, std::abs(want[i]) + 1);
      worst = std::max(worst, std::abs(got[i] - want[i]));
    }
    INFO("input ", k, ": max |weft - torch| = ", worst);
    CHECK(worst <= 1e-12 * scale);
  }
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("autograd: dense ops against torch.autograd goldens in float64") {
  namespace nn = weft::nn;
  check_case("softmax", 1, [](const auto& x, const auto&) { return weft::softmax(x[0], -1); });
  check_case("log_softmax", 1, [](const auto& x, const auto&) { return weft::log_softmax(x[0], 0); });
  check_case("matmul", 2, [](const auto& x, const auto&) { return weft::matmul(x[0], x[1]); });
  check_case("linear", 3, [](const auto& x, const auto&) { return nn::linear(x[0], x[1], x[2]); });
  check_case("layer_norm", 3, [](const auto& x, const auto&) { return nn::layer_norm(x[0], x[1], x[2], 1e-5); });
  check_case("cross_entropy", 1, [](const auto& x, const auto& i) {
    return ad::reshape(nn::cross_entropy(x[0], i), {1});
  });
  check_case("sdpa_causal", 3, [](const auto& x, const auto&) {
    nn::SdpaOptions o;
    o.is_causal = true;
    return nn::scaled_dot_product_attention(x[0], x[1], x[2], o);
  });
  check_case("embedding", 1, [](const auto& x, const auto& i) { return weft::embedding(x[0], i); });
  check_case("gather", 1, [](const auto& x, const auto& i) { return weft::gather(x[0], 0, i); });
  check_case("logsumexp", 1, [](const auto& x, const auto&) { return weft::logsumexp(x[0], 1); });
  check_case("var", 1, [](const auto& x, const auto&) { return weft::var(x[0], 0, 1.0); });
  check_case("std", 1, [](const auto& x, const auto&) { return weft::std(x[0], 1, 0.0, true); });
  check_case("norm3", 1, [](const auto& x, const auto&) { return weft::norm(x[0], 3.0, 1); });
  check_case("amax", 1, [](const auto& x, const auto&) { return weft::amax(x[0], 0); });
  check_case("gelu", 1, [](const auto& x, const auto&) { return VarD(weft::gelu(x[0])); });
  check_case("gelu_tanh", 1, [](const auto& x, const auto&) { return VarD(weft::gelu_tanh(x[0])); });
  check_case("silu_pow", 2, [](const auto& x, const auto&) { return VarD(weft::silu(x[0]) * weft::pow(x[1], x[1])); });
}

}  // TEST_SUITE

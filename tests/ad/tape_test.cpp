// SPDX-License-Identifier: MIT
/// @file The tape's semantics: backward accumulates, ad::grad touches no grad(), NoGrad records nothing, the graph is freed, a modified saved tensor or bad input is a weft::Error; the backward of a fused statement is ONE kernel (from the log).
#include <string>
#include <vector>

#include "error_check.hpp"
#include "gradcheck.hpp"
#include "log_capture.hpp"

namespace {

using weft::Tensor;
using weft_test::uniform_tensor;
namespace ad = weft::ad;

double at(const Tensor<float>& t, std::int64_t i) { return double(t.data()[i]); }

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("autograd: the backward of a * sigmoid(b) + c is one kernel writing three gradients") {
  WEFT_TEST_RNG(rng);
  const auto a = ad::param(weft::eval(weft::cast<float>(uniform_tensor(rng, {64, 33}, -1, 1))));
  const auto b = ad::param(weft::eval(weft::cast<float>(uniform_tensor(rng, {64, 33}, -1, 1))));
  const auto c = ad::param(weft::eval(weft::cast<float>(uniform_tensor(rng, {64, 33}, -1, 1))));
  ad::Var<float> y = a * weft::sigmoid(b) + c;
  const Tensor<float> dy = weft::eval(weft::cast<float>(uniform_tensor(rng, {64, 33}, -1, 1)));
  const std::vector<std::string> lines = weft_test::fusion_lines([&] { y.backward(dy); });
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find("fused 3 statement(s) into 1 kernel") != std::string::npos);
  CHECK(lines[0].find("t0 = sigmoid(") != std::string::npos);  // computed once for da and db
  for (std::int64_t i = 0; i < 64 * 33; ++i) {
    const double s = 1 / (1 + std::exp(-at(b.value(), i))), g = at(dy, i);
    CHECK(at(a.grad(), i) == doctest::Approx(g * s).epsilon(1e-6));
    CHECK(at(b.grad(), i) == doctest::Approx(g * at(a.value(), i) * s * (1 - s)).epsilon(1e-5));
    CHECK(at(c.grad(), i) == doctest::Approx(g).epsilon(1e-6));
  }
}

TEST_CASE("autograd: the backward of gelu(linear(x, w, b)) is one pointwise kernel plus the GEMMs") {
  WEFT_TEST_RNG(rng);
  auto random = [&](weft::Shape s) { return weft::eval(weft::cast<float>(uniform_tensor(rng, s, -1, 1))); };
  const auto x = ad::param(random({8, 16})), w = ad::param(random({32, 16})), b = ad::param(random({32}));
  ad::Var<float> y = weft::gelu(weft::nn::linear(x, w, b));  // the GEMM (bias in its epilogue), then gelu
  const Tensor<float> dy = random({8, 32});
  const std::vector<std::string> lines = weft_test::fusion_lines([&] { y.backward(dy); });
  REQUIRE(lines.size() == 1);  // dz = dy gelu'(z); then dx = dz w, dw = dz^T x, db = sum dz
  CHECK(lines[0].find("gelu_backward") != std::string::npos);
  // Against double: z = x w^T + b, dz = dy gelu'(z), dx = dz w.
  for (std::int64_t n = 0; n < 8; ++n)
    for (std::int64_t i = 0; i < 16; ++i) {
      double dx = 0;
      for (std::int64_t o = 0; o < 32; ++o) {
        double z = at(b.value(), o);
        for (std::int64_t k = 0; k < 16; ++k) z += at(x.value(), n * 16 + k) * at(w.value(), o * 16 + k);
        const double cdf = 0.5 * (1 + std::erf(z / std::sqrt(2.0)));
        const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI);
        dx += at(dy, n * 32 + o) * (cdf + z * pdf) * at(w.value(), o * 16 + i);
      }
      CHECK(at(x.grad(), n * 16 + i) == doctest::Approx(dx).epsilon(1e-4));
    }
}

TEST_CASE("autograd: backward accumulates; zero_grad; ad::grad leaves grad() alone") {
  const auto x = ad::param(weft::eval(weft::arange<float>(6).reshape({2, 3}) * 0.5));
  ad::Var<float> loss = weft::sum(x * x);
  loss.backward();  // d/dx = 2x
  loss = weft::sum(x * 3.0);
  loss.backward();  // + 3
  for (std::int64_t i = 0; i < 6; ++i) CHECK(at(x.grad(), i) == doctest::Approx(2 * 0.5 * double(i) + 3));
  ad::Var<float> other = weft::sum(weft::exp(x));
  const std::vector<Tensor<float>> g = ad::grad(other, {x});
  for (std::int64_t i = 0; i < 6; ++i) {
    CHECK(at(g[0], i) == doctest::Approx(std::exp(0.5 * double(i))).epsilon(1e-6));
    CHECK(at(x.grad(), i) == doctest::Approx(2 * 0.5 * double(i) + 3));  // untouched
  }
  x.zero_grad();
  for (std::int64_t i = 0; i < 6; ++i) CHECK(at(x.grad(), i) == 0.0);
}

TEST_CASE("autograd: a tied weight's second backward adds in place (embedding's rows by index_add, linear's dW)") {
  // wte read by embedding and, tied, as a linear weight (GPT-2's LM head); its grad() set beforehand to
  // nonzero values: each use adds, and the embedding's rows go into the existing gradient in place.
  WEFT_TEST_RNG(rng);
  const Tensor<float> w0 = weft::eval(weft::cast<float>(uniform_tensor(rng, {7, 5}, -1, 1)));
  const Tensor<std::int32_t> ids = weft::from_vector(std::vector<std::int32_t>{3, 0, 3, 6, 3, 1}, {2, 3});
  auto run = [&](const ad::Var<float>& w) {
    ad::Var<float> y = weft::nn::linear(weft::embedding(w, ids), w);  // [2, 3, 7]
    weft::sum(weft::square(y)).backward();
  };
  const auto fresh = ad::param(Tensor<float>(w0));
  run(fresh);  // no gradient before: embedding_backward's dense rows
  const auto preset = ad::param(Tensor<float>(w0));
  const Tensor<float> before = weft::eval(weft::cast<float>(uniform_tensor(rng, {7, 5}, -1, 1)));
  preset.grad() = before;
  const float* address = preset.grad().data();
  run(preset);
  CHECK(preset.grad().data() == address);  // written in place
  for (std::int64_t i = 0; i < 35; ++i)
    CHECK(at(preset.grad(), i) == doctest::Approx(at(before, i) + at(fresh.grad(), i)).epsilon(1e-5));
}

TEST_CASE("autograd: NoGrad records nothing; constants get no gradient") {
  const auto x = ad::param(weft::ones<float>({3}));
  const ad::Var<float> constant(weft::ones<float>({3}));
  {
    ad::NoGrad guard;
    ad::Var<float> y = x * 2.0;
    CHECK(!y.requires_grad());
    CHECK_THROWS_WITH_AS(y.backward(weft::ones<float>({3})), doctest::Contains("requires no gradient"), weft::Error);
  }
  ad::Var<float> z = x * constant + constant;
  CHECK(z.requires_grad());
  ad::Var<float> w = constant * 2.0;
  CHECK(!w.requires_grad());
}

TEST_CASE("autograd: a graph is freed by its backward; a second backward through it is an error") {
  const auto x = ad::param(weft::ones<float>({3}));
  ad::Var<float> y = weft::exp(x);
  ad::Var<float> loss = weft::sum(y);
  std::weak_ptr<ad::detail::NodeBase> y_node = y.node();
  loss.backward();
  CHECK_THROWS_WITH_AS(loss.backward(), doctest::Contains("freed by an earlier backward"), weft::Error);
  y = ad::Var<float>();
  loss = ad::Var<float>();
  CHECK(y_node.expired());  // nothing holds the graph any more
}

TEST_CASE("autograd: a tensor saved for the backward and modified before it is an error") {
  const auto w = ad::param(weft::ones<float>({2, 2}));
  ad::Var<float> loss = weft::sum(weft::matmul(w, w));
  w.data() += 1.0f;  // an optimizer step between forward and backward
  CHECK_THROWS_WITH_AS(loss.backward(), doctest::Contains("modified in place after the forward"), weft::Error);
  const auto v = ad::param(weft::ones<float>({4}));
  Tensor<float> k = weft::ones<float>({4});
  ad::Var<float> y = weft::sum(v * k);
  k += 1.0f;  // a constant the pointwise backward reads again
  CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("'sum' saved for its backward"), weft::Error);
}

TEST_CASE("autograd: bad input names the op, the shapes and the fix") {
  const auto x = ad::param(weft::ones<float>({2, 3}));
  ad::Var<float> y = x * 2.0;
  CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("needs a one-element Var (a loss), got shape [2, 3]"),
                       weft::Error);
  CHECK_THROWS_WITH_AS(y.backward(weft::ones<float>({3, 2})),
                       doctest::Contains("must have the Var's shape [2, 3]"), weft::Error);
  CHECK_THROWS_WITH_AS(ad::grad(y, {x}), doctest::Contains("without dy, y must have one element"), weft::Error);
  CHECK_THROWS_WITH_AS(ad::grad(y, {x}, weft::ones<float>({2})), doctest::Contains("dy has shape [2]"),
                       weft::Error);
  const ad::Var<float> constant(weft::ones<float>({2, 3}));
  CHECK_THROWS_WITH_AS(ad::grad(weft::sum(y), {constant}), doctest::Contains("input 0 requires no gradient"),
                       weft::Error);
  CHECK_THROWS_WITH_AS(weft::matmul(x, ad::param(weft::ones<float>({3}))),
                       doctest::Contains("both operands need 2 or more dims"), weft::Error);
  CHECK_THROWS_WITH_AS(ad::param(Tensor<float>()), doctest::Contains("empty"), weft::Error);
  CHECK_THROWS_WITH_AS(ad::Var<float>().value(), doctest::Contains("the Var is empty"), weft::Error);
}

}  // TEST_SUITE

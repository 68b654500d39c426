// SPDX-License-Identifier: MIT
/// @file cuda: the dense ops and list functions on CPU tensors, from a file nvcc compiles, against
/// double-precision references. Runs without a GPU. It is also what lets scripts/check-odr see
/// these functions compiled by both nvcc and g++ in one program (their host-compiled twins are in
/// the cpu suite's objects and this suite's .cpp files): an inline function that reaches a
/// backend outside WEFT_BACKEND_ABI would show up here.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include <weft/ops/factories.hpp>
#include <weft/ops/foreach_norm.hpp>
#include <weft/ops/fuse.hpp>
#include <weft/ops/layer_norm.hpp>
#include <weft/ops/matmul.hpp>
#include <weft/ops/reduce.hpp>
#include <weft/ops/softmax.hpp>
#include <weft/expr/operators.hpp>

#include "reference.hpp"

using namespace weft_test;

TEST_SUITE("cuda") {

TEST_CASE("cuda file, CPU tensors: matmul, sum, softmax, layer_norm against double references") {
  WEFT_TEST_RNG(rng);
  const std::int64_t n = 5, k = 7, m = 3;
  const Tensor<float> a = random_contiguous<float>(rng, Shape{n, k}, Domain{});
  const Tensor<float> b = random_contiguous<float>(rng, Shape{k, m}, Domain{});
  const std::vector<float> av = a.to_vector(), bv = b.to_vector();
  const std::vector<float> c = weft::eval(weft::matmul(a, b)).to_vector();
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < m; ++j) {
      double want = 0, mag = 0;
      for (std::int64_t p = 0; p < k; ++p) want += double(av[i * k + p]) * bv[p * m + j], mag += std::fabs(av[i * k + p] * bv[p * m + j]);
      CHECK(std::fabs(c[i * m + j] - want) <= 4 * k * 6e-8 * mag + 1e-30);
    }
  double total = 0, mag = 0;
  for (float x : av) total += x, mag += std::fabs(x);
  CHECK(std::fabs(double(weft::sum(a).item()) - total) <= 4 * double(av.size()) * 6e-8 * mag);

  const std::vector<float> s = weft::softmax(a, 1).to_vector();
  const Tensor<float> w = weft::ones<float>(Shape{k}), bias = weft::zeros<float>(Shape{k});
  const std::vector<float> ln = weft::layer_norm(a, w, bias, 1e-5).to_vector();
  for (std::int64_t i = 0; i < n; ++i) {
    double mx = -1e300, z = 0, mean = 0, var = 0;
    for (std::int64_t p = 0; p < k; ++p) mx = std::max(mx, double(av[i * k + p])), mean += av[i * k + p] / double(k);
    for (std::int64_t p = 0; p < k; ++p) z += std::exp(av[i * k + p] - mx), var += std::pow(av[i * k + p] - mean, 2) / double(k);
    for (std::int64_t p = 0; p < k; ++p) {
      CHECK(std::fabs(s[i * k + p] - std::exp(av[i * k + p] - mx) / z) <= 1e-6);
      CHECK(std::fabs(ln[i * k + p] - (av[i * k + p] - mean) / std::sqrt(var + 1e-5)) <= 2e-5);
    }
  }
}

TEST_CASE("cuda file, CPU tensors: foreach_norm, global_norm, clip_grad_norm and a list statement") {
  WEFT_TEST_RNG(rng);
  std::vector<Tensor<float>> owned;
  for (std::int64_t size : {3, 1000, 17}) owned.push_back(random_contiguous<float>(rng, Shape{size}, Domain{}));
  weft::TensorList<float> grads(owned);
  std::vector<double> sq(owned.size(), 0.0);
  double all = 0;
  for (std::size_t t = 0; t < owned.size(); ++t)
    for (float x : owned[t].to_vector()) sq[t] += double(x) * x, all += double(x) * x;
  const std::vector<float> norms = weft::foreach_norm(grads).to_vector();
  for (std::size_t t = 0; t < owned.size(); ++t) CHECK(std::fabs(norms[t] - std::sqrt(sq[t])) <= 1e-5 * std::sqrt(sq[t]));
  CHECK(std::fabs(double(weft::global_norm(grads).item()) - std::sqrt(all)) <= 1e-5 * std::sqrt(all));

  const std::vector<float> before = owned[1].to_vector();
  const double max_norm = 0.25 * std::sqrt(all);
  const double norm = double(weft::clip_grad_norm(grads, max_norm).item());
  CHECK(std::fabs(norm - std::sqrt(all)) <= 1e-5 * std::sqrt(all));
  const double coef = max_norm / (std::sqrt(all) + 1e-6);
  const std::vector<float> after = owned[1].to_vector();
  for (std::size_t i = 0; i < after.size(); ++i) CHECK(std::fabs(after[i] - before[i] * coef) <= 1e-6 * std::fabs(before[i]) + 1e-12);

  grads = grads * 2.0f + 1.0f;  // one foreach kernel over the list
  const std::vector<float> updated = owned[1].to_vector();
  for (std::size_t i = 0; i < after.size(); ++i) CHECK(updated[i] == after[i] * 2.0f + 1.0f);
}

}  // TEST_SUITE

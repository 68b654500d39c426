// SPDX-License-Identifier: MIT
/// @file Autograd of the dense ops (reductions, views, matmul, softmax, indexing, linear, layer_norm, cross_entropy, attention) against finite differences in double.
#include <cstdint>
#include <limits>

#include "gradcheck.hpp"

namespace {

using weft::Shape;
using weft::Tensor;
using weft_test::gradcheck;
using weft_test::uniform_tensor;
using weft_test::VarD;
using weft_test::Vars;

Tensor<std::int64_t> random_indices(weft_test::Rng& rng, const Shape& shape, std::int64_t limit) {
  Tensor<std::int64_t> t = weft::empty<std::int64_t>(shape);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data()[i] = rng.integer(0, limit - 1);
  return t;
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("autograd: sum and mean over dims, with keepdim, of an expression") {
  WEFT_TEST_RNG(rng);
  const Tensor<double> a = uniform_tensor(rng, {2, 3, 4}, -1, 1), b = uniform_tensor(rng, {3, 1}, -1, 1);
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::sum(v[0] * weft::sigmoid(v[1])); }, {a, b});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::mean(weft::square(v[0]) + v[1]); }, {a, b});
  for (bool keepdim : {false, true}) {
    gradcheck(rng, [&](const Vars& v) -> VarD { return weft::sum(v[0] * v[1], {0, 2}, keepdim); }, {a, b});
    gradcheck(rng, [&](const Vars& v) -> VarD { return weft::mean(weft::exp(v[0]), -1, keepdim); }, {a});
    gradcheck(rng, [&](const Vars& v) -> VarD { return weft::sum(v[0], 1, keepdim) * 2.0; }, {a});
  }
}

TEST_CASE("autograd: amax, amin, logsumexp, var, std and norm") {
  WEFT_TEST_RNG(rng);
  const Tensor<double> a = uniform_tensor(rng, {3, 4}, -2, 2);  // distinct values: no ties
  for (bool keepdim : {false, true}) {
    gradcheck(rng, [&](const Vars& v) -> VarD { return weft::amax(v[0], 1, keepdim); }, {a});
    gradcheck(rng, [&](const Vars& v) -> VarD { return weft::amin(weft::sin(v[0]), 0, keepdim); }, {a});
    gradcheck(rng, [&](const Vars& v) -> VarD { return weft::logsumexp(v[0], 1, keepdim); }, {a});
    gradcheck(rng, [&](const Vars& v) -> VarD { return weft::var(v[0], 0, 1.0, keepdim); }, {a});
    gradcheck(rng, [&](const Vars& v) -> VarD { return weft::std(v[0], {0, 1}, 0.0, keepdim); }, {a});
    for (double p : {1.0, 2.0, 3.0, std::numeric_limits<double>::infinity()})
      gradcheck(rng, [&](const Vars& v) -> VarD { return weft::norm(v[0], p, 1, keepdim); }, {a});
  }
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::max(v[0]) + weft::min(v[0]); }, {a});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::var(v[0]) * weft::std(v[0]); }, {a});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::norm(v[0]); }, {a});
  // Ties share the gradient evenly (torch's amax): [1, 3, 3] -> [0, 1/2, 1/2].
  const auto t = weft::ad::param(weft::from_vector<double>({1.0, 3.0, 3.0}, {3}));
  weft::amax(t).backward();
  CHECK(t.grad().to_vector() == std::vector<double>{0.0, 0.5, 0.5});
}

TEST_CASE("autograd: cat, stack, split, chunk, slice and masked_fill") {
  WEFT_TEST_RNG(rng);
  const Tensor<double> a = uniform_tensor(rng, {2, 3}, -1, 1), b = uniform_tensor(rng, {2, 2}, -1, 1);
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::cat(std::vector<VarD>{v[0], v[1], v[0]}, 1) * 2.0; }, {a, b});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::stack(std::vector<VarD>{v[0], weft::exp(v[0])}, 1); }, {a});
  gradcheck(rng, [](const Vars& v) -> VarD {
    const std::vector<VarD> parts = weft::split(v[0], {1, 2}, 1);
    return weft::square(parts[1]) + parts[0];
  }, {a});
  gradcheck(rng, [](const Vars& v) -> VarD {
    const std::vector<VarD> parts = weft::chunk(v[0], 2, 0);
    return parts[0] * parts[1];
  }, {a});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::ad::slice(v[0], 1, 0, 3, 2) * 3.0; }, {a});
  const Tensor<double> m = uniform_tensor(rng, {2, 3}, -1, 1);
  gradcheck(rng, [&](const Vars& v) -> VarD { return weft::masked_fill(v[0] * v[0], m > 0.0, 5); }, {a});
}

TEST_CASE("autograd: views (reshape, transpose, permute, unsqueeze, squeeze, expand, narrow, select)") {
  WEFT_TEST_RNG(rng);
  const Tensor<double> a = uniform_tensor(rng, {2, 3, 4}, -1, 1), r = uniform_tensor(rng, {3, 1}, -1, 1);
  namespace ad = weft::ad;
  gradcheck(rng, [](const Vars& v) -> VarD { return ad::reshape(v[0], {6, 4}) * 2.0; }, {a});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::sin(ad::transpose(v[0], 0, 2)); }, {a});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::exp(ad::permute(v[0], {2, 0, 1})); }, {a});
  gradcheck(rng, [](const Vars& v) -> VarD { return ad::unsqueeze(v[0], 1) * ad::unsqueeze(v[0], 1); }, {a});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::tanh(ad::squeeze(v[0], 1)); }, {r});
  gradcheck(rng, [](const Vars& v) -> VarD { return ad::expand(v[0], {2, 3, 5}) * 1.5; }, {r});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::square(ad::narrow(v[0], 2, 1, 2)) + ad::narrow(v[0], 2, 0, 2); },
            {a});
  gradcheck(rng, [](const Vars& v) -> VarD { return ad::select(v[0], 1, 2) * ad::select(v[0], 1, 0); }, {a});
}

TEST_CASE("autograd: matmul, batched and broadcast over batch dims") {
  WEFT_TEST_RNG(rng);
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::matmul(v[0], v[1]); },
            {uniform_tensor(rng, {3, 5}, -1, 1), uniform_tensor(rng, {5, 4}, -1, 1)});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::matmul(v[0], v[1]); },
            {uniform_tensor(rng, {2, 3, 5}, -1, 1), uniform_tensor(rng, {5, 4}, -1, 1)});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::matmul(weft::tanh(v[0]), weft::ad::transpose(v[1], -2, -1)); },
            {uniform_tensor(rng, {2, 1, 3, 5}, -1, 1), uniform_tensor(rng, {3, 4, 5}, -1, 1)});
  // A constant operand: only the Var gets a gradient.
  const Tensor<double> w = uniform_tensor(rng, {5, 2}, -1, 1);
  gradcheck(rng, [&](const Vars& v) -> VarD { return weft::matmul(v[0], w); }, {uniform_tensor(rng, {3, 5}, -1, 1)});
}

TEST_CASE("autograd: softmax and log_softmax along a dim") {
  WEFT_TEST_RNG(rng);
  const Tensor<double> a = uniform_tensor(rng, {3, 5}, -2, 2);
  for (std::int64_t dim : {0, 1}) {
    gradcheck(rng, [&](const Vars& v) -> VarD { return weft::softmax(v[0], dim); }, {a});
    gradcheck(rng, [&](const Vars& v) -> VarD { return weft::log_softmax(v[0] * 2.0, dim); }, {a});
  }
}

TEST_CASE("autograd: embedding, index_select and gather with repeated indices") {
  WEFT_TEST_RNG(rng);
  const Tensor<std::int64_t> ids = random_indices(rng, {2, 6}, 4);  // 12 reads of 4 rows: repeats
  gradcheck(rng, [&](const Vars& v) -> VarD { return weft::embedding(v[0], ids); }, {uniform_tensor(rng, {4, 3}, -1, 1)});
  const Tensor<std::int64_t> rows = random_indices(rng, {7}, 3);
  gradcheck(rng, [&](const Vars& v) -> VarD { return weft::index_select(v[0], 1, rows); },
            {uniform_tensor(rng, {2, 3}, -1, 1)});
  const Tensor<std::int64_t> g = random_indices(rng, {4, 2}, 3);
  gradcheck(rng, [&](const Vars& v) -> VarD { return weft::gather(v[0], 0, g); }, {uniform_tensor(rng, {3, 2}, -1, 1)});
}

TEST_CASE("autograd: nn::linear, layer_norm and cross_entropy through their backward kernels") {
  WEFT_TEST_RNG(rng);
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::nn::linear(v[0], v[1], v[2]); },
            {uniform_tensor(rng, {2, 3, 5}, -1, 1), uniform_tensor(rng, {4, 5}, -1, 1), uniform_tensor(rng, {4}, -1, 1)});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::nn::layer_norm(v[0], v[1], v[2], 1e-5); },
            {uniform_tensor(rng, {3, 6}, -1, 1), uniform_tensor(rng, {6}, 0.5, 1.5), uniform_tensor(rng, {6}, -1, 1)});
  const Tensor<std::int64_t> targets = random_indices(rng, {2, 3}, 5);
  for (auto reduction : {weft::nn::Reduction::mean, weft::nn::Reduction::sum, weft::nn::Reduction::none})
    gradcheck(rng, [&](const Vars& v) -> VarD { return weft::nn::cross_entropy(v[0] * 2.0, targets, reduction); },
              {uniform_tensor(rng, {2, 3, 5}, -1, 1)});
  // Targets as an integer expression (evaluated once): int32 class indices computed from int64 ones.
  gradcheck(rng, [&](const Vars& v) -> VarD { return weft::nn::cross_entropy(v[0], weft::cast<std::int32_t>(targets + 0)); },
            {uniform_tensor(rng, {2, 3, 5}, -1, 1)});
}

TEST_CASE("autograd: scaled_dot_product_attention, causal, through the flash backward") {
  WEFT_TEST_RNG(rng);
  for (bool causal : {false, true}) {
    weft::nn::SdpaOptions o;
    o.is_causal = causal;
    gradcheck(rng, [&](const Vars& v) -> VarD { return weft::nn::scaled_dot_product_attention(v[0], v[1], v[2], o); },
              {uniform_tensor(rng, {1, 2, 5, 4}, -1, 1), uniform_tensor(rng, {1, 2, 5, 4}, -1, 1),
               uniform_tensor(rng, {1, 2, 5, 3}, -1, 1)});
  }
}

}  // TEST_SUITE

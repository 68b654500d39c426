// SPDX-License-Identifier: MIT
/// @file examples/gpt2's Decoder: token-by-token decoding with a KV cache gives, at every position, the logits of the training forward over the whole sequence, and prepacked decoding has the unpacked decoding's bits.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include <doctest/doctest.h>

#include "../../examples/gpt2/decode.hpp"
#include "matmul_reference.hpp"
#include "reference.hpp"

namespace gpt2_decode_test {

using namespace weft;
using namespace weft_test;

/// A small GPT-2 (2 layers, 4 heads of 8 channels, 67 tokens padded to 72, 16 positions) with every parameter
/// random, layer-norm weights included.
gpt2::Model random_model(Rng& rng) {
  gpt2::Config c;
  c.max_seq_len = 16, c.vocab_size = 67, c.padded_vocab_size = 72, c.num_layers = 2, c.num_heads = 4, c.channels = 32;
  gpt2::Model model(gpt2::initial_checkpoint(c, rng.bits()));
  TensorView<float> p = model.parameters();
  p = random_contiguous<float>(rng, p.shape(), Domain{-0.5, 0.5});
  return model;
}

/// The sums along one logit's path, longest first by stage: per block the layer norm's mean and variance (C
/// each), q k^T (hs), the softmax's sum and its weights times v (t + 1 each), the output projection (C), the MLP's
/// two products (C and 4C); then the final layer norm (2C) and the head (C). Each rounds at most once per term in
/// float, so the logits of two summation orders differ by at most about u times their total length times the
/// logits' scale (the layer norms rescale errors and values alike).
std::int64_t path_sum_length(const gpt2::Config& c, std::int64_t t) {
  const std::int64_t C = c.channels, hs = C / c.num_heads;
  return c.num_layers * (2 * C + hs + 2 * (t + 1) + C + 2 * C + C + 4 * C) + 2 * C + C;
}

void check_decoding(Rng& rng) {
  gpt2::Model model = random_model(rng);
  const gpt2::Config& c = model.config();
  const std::int64_t B = 3, T = 12;
  const Tensor<std::int32_t> tokens =
      random_contiguous<std::int32_t>(rng, Shape{B, T}, Domain{0, double(c.vocab_size - 1)});
  Tensor<float> full;
  {
    ad::NoGrad inference;
    full = gpt2::forward_logits(model.weights(), c, tokens).value();  // [B, T, V]
  }
  gpt2::Decoder plain(model.weights(), c, B, T, false), packed(model.weights(), c, B, T, true);
  const double u = std::numeric_limits<float>::epsilon() / 2;
  for (std::int64_t t = 0; t < T; ++t) {
    INFO("position ", t);
    CHECK(plain.position() == t);
    const Tensor<std::int32_t> column(tokens.select(1, t));
    const Tensor<float> got = plain.step(column), got_packed = packed.step(column);
    REQUIRE(got.shape() == Shape{B, c.vocab_size});
    CHECK(std::memcmp(got.data(), got_packed.data(), std::size_t(got.numel()) * sizeof(float)) == 0);
    const Tensor<float> want(full.select(1, t));
    double scale = 0, worst = 0;
    for (std::int64_t i = 0; i < want.numel(); ++i) scale = std::max(scale, std::fabs(double(want.data()[i])));
    for (std::int64_t i = 0; i < want.numel(); ++i)
      worst = std::max(worst, std::isnan(got.data()[i]) ? INFINITY : std::fabs(double(got.data()[i]) - want.data()[i]));
    const double tolerance = double(path_sum_length(c, t)) * u * scale;
    INFO("max |decoded - full| ", worst, ", tolerance ", tolerance);
    CHECK(worst <= tolerance);
  }
  CHECK_THROWS_WITH_AS((void)plain.step(Tensor<std::int32_t>(tokens.select(1, 0))), doctest::Contains("all filled"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((void)packed.step(Tensor<std::int32_t>(tokens)), doctest::Contains("one token per sequence"),
                       std::invalid_argument);
}

TEST_CASE("gpt2::Decoder: every position's logits are the full forward's; prepacked decoding has the same bits") {
  WEFT_TEST_RNG(rng);
  SUBCASE("the products on the GEMMs they choose (Eigen's at these sizes: the panels unused)") { check_decoding(rng); }
  SUBCASE("every product on the FMA GEMM, the prepacked ones on their panels") {
    FmaGemmAlways fma;
    check_decoding(rng);
  }
}

}  // namespace gpt2_decode_test

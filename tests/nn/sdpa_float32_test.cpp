// SPDX-License-Identifier: MIT
/// @file cpu: attention in float32, flash and math backends, forward and backward, against a double-precision reference on random problems and PyTorch's golden cases (tests/golden/sdpa).
#include "sdpa_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {

TEST_CASE("sdpa: random float32 problems against the double reference") {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 40; ++iter) check_random_case<float>(rng);
}

}

TEST_SUITE("cpu") {
TEST_CASE("sdpa: PyTorch golden cases, float32") { CHECK(check_goldens_of<float>() == 12); }

// The backward's threads each sum dq over the key blocks dealt to them, and the partial sums are
// added in thread order: the same call gives the same bits every time (a dynamic schedule did not).
TEST_CASE("sdpa: the flash backward gives the same bits on every run of one call") {
  WEFT_TEST_RNG(rng);
  for (const bool causal : {false, true}) {
    CAPTURE(causal);
    const Shape qs{1, 3, 400, 32}, ks{1, 3, 380, 32};
    auto values = [&](const Shape& shape) { return tensor_of<float>(random_values<float>(rng, shape.numel()), shape); };
    const Tensor<float> q = values(qs), k = values(ks), v = values(ks), dout = values(qs);
    nn::SdpaOptions o;
    o.is_causal = causal;
    const nn::SdpaOutput<float> f = nn::sdpa_forward(q, k, v, o);
    const nn::SdpaGradients<float> first = nn::sdpa_backward(dout, q, k, v, f.out, f.lse, o);
    for (int run = 0; run < 4; ++run) {
      const nn::SdpaGradients<float> again = nn::sdpa_backward(dout, q, k, v, f.out, f.lse, o);
      CHECK(values_of(again.dq) == values_of(first.dq));
      CHECK(values_of(again.dk) == values_of(first.dk));
      CHECK(values_of(again.dv) == values_of(first.dv));
    }
  }
}
}

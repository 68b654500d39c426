// SPDX-License-Identifier: MIT
/// @file cpu: attention in float64, flash and math backends, forward and backward, against a double-precision reference on random problems and PyTorch's golden cases (tests/golden/sdpa).
#include "sdpa_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {

TEST_CASE("sdpa: random float64 problems against the double reference") {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 40; ++iter) check_random_case<double>(rng);
}

}

TEST_SUITE("cpu") {

// The backward pass against central finite differences of L = sum(dout * out), in float64, with a
// float mask, GQA and dropout (a fixed seed makes the loss a smooth function of q, k and v).
// Step h = 1e-6: truncation ~h^2 |L'''| ~1e-12, cancellation ~eps |L| / h ~1e-10.
TEST_CASE("sdpa: float64 gradients against finite differences") {
  WEFT_TEST_RNG(rng);
  const std::int64_t Hq = 4, H = 2, L = 5, S = 7, E = 3, Ev = 4;
  std::vector<double> qv = random_values<double>(rng, 2 * Hq * L * E), kv = random_values<double>(rng, 2 * H * S * E),
                      vv = random_values<double>(rng, 2 * H * S * Ev), dv = random_values<double>(rng, 2 * Hq * L * Ev),
                      mv = random_values<double>(rng, L * S);
  nn::SdpaOptions o;
  o.enable_gqa = true;
  o.attn_mask = tensor_of<double>(mv, {L, S});
  o.dropout_p = 0.3;
  o.seed = rng.bits();
  const Shape qs{2, Hq, L, E}, ks{2, H, S, E}, vs{2, H, S, Ev}, os{2, Hq, L, Ev};
  auto loss = [&](const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v) {
    const auto out = values_of(nn::scaled_dot_product_attention(tensor_of<double>(q, qs), tensor_of<double>(k, ks),
                                                                tensor_of<double>(v, vs), o));
    double sum = 0;
    for (std::size_t i = 0; i < out.size(); ++i) sum += out[i] * dv[i];
    return sum;
  };
  const auto f = nn::sdpa_forward(tensor_of<double>(qv, qs), tensor_of<double>(kv, ks), tensor_of<double>(vv, vs), o);
  const auto g = nn::sdpa_backward(tensor_of<double>(dv, os), tensor_of<double>(qv, qs), tensor_of<double>(kv, ks),
                                   tensor_of<double>(vv, vs), f.out, f.lse, o);
  const std::vector<double> grads[3] = {values_of(g.dq), values_of(g.dk), values_of(g.dv)};
  std::vector<double>* inputs[3] = {&qv, &kv, &vv};
  const char* names[3] = {"dq", "dk", "dv"};
  for (int t = 0; t < 3; ++t)
    for (std::size_t i = 0; i < inputs[t]->size(); ++i) {
      double& x = (*inputs[t])[i];
      const double x0 = x, h = 1e-6;
      x = x0 + h;
      const double up = loss(qv, kv, vv);
      x = x0 - h;
      const double down = loss(qv, kv, vv);
      x = x0;
      const double numeric = (up - down) / (2 * h);
      INFO(names[t], "[", i, "]: analytic ", grads[t][i], ", numeric ", numeric);
      CHECK(std::fabs(grads[t][i] - numeric) <= 1e-7 * (1 + std::fabs(numeric)));
    }
}

}

TEST_SUITE("cpu") {
TEST_CASE("sdpa: PyTorch golden cases, float64") { CHECK(check_goldens_of<double>() == 1); }
}

// SPDX-License-Identifier: MIT
/// @file cpu: attention's API around the numbers: every error (with shapes, nothing written), the backend
/// guard and the `sdpa` log, rows that see no key, dropout's rate and determinism, mask rebinding.
#include "log_capture.hpp"
#include "sdpa_suite.hpp"

using namespace weft_test;

namespace {

Tensor<float> randn(Rng& rng, const Shape& s) { return tensor_of<float>(random_values<float>(rng, s.numel()), s); }

/// f() throws weft::Error whose message contains every one of `parts`.
template <class F>
void check_error(F&& f, std::initializer_list<const char*> parts) {
  try {
    f();
    FAIL("no weft::Error thrown");
  } catch (const weft::Error& e) {
    const std::string msg = e.what();
    for (const char* p : parts) CHECK_MESSAGE(msg.find(p) != std::string::npos, "'", p, "' not in: ", msg);
  }
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("sdpa: bad input throws weft::Error naming the op, the shapes and the fix") {
  WEFT_TEST_RNG(rng);
  const Tensor<float> q = randn(rng, {2, 4, 5, 8}), k = randn(rng, {2, 2, 7, 8}), v = randn(rng, {2, 2, 7, 6});
  nn::SdpaOptions gqa;
  gqa.enable_gqa = true;
  check_error([&] { nn::scaled_dot_product_attention(randn(rng, {8}), randn(rng, {8}), randn(rng, {8})); },
              {"nn::sdpa_forward", "at least 2 dims", "q [8]"});
  check_error([&] { nn::scaled_dot_product_attention(q, k, v); }, {"4 heads", "enable_gqa", "q [2, 4, 5, 8]"});
  check_error([&] { nn::scaled_dot_product_attention(q, randn(rng, {2, 3, 7, 8}), randn(rng, {2, 3, 7, 6}), gqa); },
              {"multiple", "k [2, 3, 7, 8]"});
  check_error([&] { nn::scaled_dot_product_attention(q, randn(rng, {2, 2, 7, 9}), v, gqa); }, {"E (8)", "k [2, 2, 7, 9]"});
  check_error([&] { nn::scaled_dot_product_attention(q, k, randn(rng, {2, 2, 6, 6}), gqa); }, {"sequence length S"});
  check_error([&] { nn::scaled_dot_product_attention(q, randn(rng, {3, 2, 7, 8}), randn(rng, {3, 2, 7, 6}), gqa); },
              {"batch dims"});
  nn::SdpaOptions bad_mask = gqa;
  bad_mask.attn_mask = Tensor<bool>(weft::empty<bool>({3, 7}));
  check_error([&] { nn::scaled_dot_product_attention(q, k, v, bad_mask); }, {"attn_mask of shape [3, 7]", "[2, 4, 5, 7]"});
  nn::SdpaOptions both = gqa;
  both.attn_mask = randn(rng, {5, 7});
  both.is_causal = true;
  check_error([&] { nn::scaled_dot_product_attention(q, k, v, both); }, {"cannot both be set"});
  for (double p : {-0.1, 1.0}) {
    nn::SdpaOptions drop = gqa;
    drop.dropout_p = p;
    check_error([&] { nn::scaled_dot_product_attention(q, k, v, drop); }, {"dropout_p", "[0, 1)"});
  }
  const auto f = nn::sdpa_forward(q, k, v, gqa);
  check_error([&] { nn::sdpa_backward(randn(rng, {2, 4, 5, 5}), q, k, v, f.out, f.lse, gqa); },
              {"nn::sdpa_backward", "dout ([2, 4, 5, 5])", "[2, 4, 5, 6]"});
  check_error([&] { nn::sdpa_backward(randn(rng, {2, 4, 5, 6}), q, k, v, f.out, Tensor<double>(), gqa); }, {"lse"});
  nn::SdpaBackendGuard none({});
  check_error([&] { nn::scaled_dot_product_attention(q, k, v, gqa); }, {"no attention backend"});
}

TEST_CASE("sdpa: SdpaBackendGuard picks the backend, the sdpa log says which and why") {
  WEFT_TEST_RNG(rng);
  const Tensor<float> q = randn(rng, {1, 2, 4, 8}), k = randn(rng, {1, 2, 6, 8}), v = randn(rng, {1, 2, 6, 8});
  weft::set_logs("sdpa");
  LogCapture capture;
  nn::scaled_dot_product_attention(q, k, v);
  {
    nn::SdpaBackendGuard guard({nn::SdpaBackend::math});
    CHECK(nn::backend_allowed(nn::SdpaBackend::math));
    CHECK_FALSE(nn::backend_allowed(nn::SdpaBackend::flash));
    nn::scaled_dot_product_attention(q, k, v);
  }
  CHECK(nn::backend_allowed(nn::SdpaBackend::flash));  // restored
  const std::string text = capture.text();
  capture.restore();
  weft::set_logs("");
  CHECK(text.find("[weft:sdpa] nn::sdpa_forward: flash backend (cpu, float32, q [1, 2, 4, 8]") != std::string::npos);
  CHECK(text.find("math backend") != std::string::npos);
  CHECK(text.find("flash refused: excluded by SdpaBackendGuard") != std::string::npos);
}

TEST_CASE("sdpa: rows that see no key give 0, lse +inf and zero gradients") {
  WEFT_TEST_RNG(rng);
  // lower_right with L > S: query i sees keys j <= i - (L - S), so the first L - S rows see none.
  const std::int64_t L = 130, S = 100;
  const Tensor<float> q = randn(rng, {1, 1, L, 16}), k = randn(rng, {1, 1, S, 16}), v = randn(rng, {1, 1, S, 16});
  nn::SdpaOptions o;
  o.is_causal = true;
  o.causal_variant = nn::CausalVariant::lower_right;
  const auto f = nn::sdpa_forward(q, k, v, o);
  const auto g = nn::sdpa_backward(randn(rng, {1, 1, L, 16}), q, k, v, f.out, f.lse, o);
  const auto out = values_of(f.out), lse = values_of(f.lse), dq = values_of(g.dq);
  for (std::int64_t i = 0; i < L; ++i) {
    INFO("row ", i);
    const bool none = i < L - S;
    CHECK((lse[std::size_t(i)] == INFINITY) == none);
    for (std::int64_t e = 0; e < 16; ++e) {
      CHECK(std::isfinite(out[std::size_t(i * 16 + e)]));
      if (none) CHECK(out[std::size_t(i * 16 + e)] == 0.0);
      if (none) CHECK(dq[std::size_t(i * 16 + e)] == 0.0);
    }
  }
}

TEST_CASE("sdpa: dropout drops a fraction p, is a function of the seed, and forward and backward agree") {
  WEFT_TEST_RNG(rng);
  const double p = 0.3;
  nn::detail::SdpaDropout dropout(p, rng.bits());
  std::vector<float> factors(200000);
  dropout.factors(7, std::int64_t(factors.size()), factors.data());
  double dropped = 0, other = 0;
  for (float f : factors) dropped += f == 0.0f, other += f != 0.0f && f != float(1 / (1 - p));
  CHECK(other == 0);  // every factor is 0 or 1 / (1 - p)
  // Binomial: sd = sqrt(n p (1 - p)) = 205 drops; 6 sd.
  CHECK(std::fabs(dropped - p * double(factors.size())) < 6 * std::sqrt(double(factors.size()) * p * (1 - p)));
  const Tensor<float> q = randn(rng, {2, 40, 16}), k = randn(rng, {2, 50, 16}), v = randn(rng, {2, 50, 16});
  nn::SdpaOptions o;
  o.dropout_p = p;
  o.seed = 1234;
  const auto a = values_of(nn::scaled_dot_product_attention(q, k, v, o));
  CHECK(a == values_of(nn::scaled_dot_product_attention(q, k, v, o)));  // same seed, same mask
  o.seed = 1235;
  CHECK(a != values_of(nn::scaled_dot_product_attention(q, k, v, o)));
}

TEST_CASE("sdpa: assigning attn_mask rebinds it and never writes into the previous mask") {
  WEFT_TEST_RNG(rng);
  const Tensor<float> m1 = randn(rng, {3, 4}), m2 = randn(rng, {3, 4});
  const std::vector<double> before = values_of(m1);
  nn::SdpaOptions o;
  o.attn_mask = m1;
  o.attn_mask = m2;
  CHECK(values_of(m1) == before);
  CHECK(std::get<weft::TensorView<const float>>(o.attn_mask.variant()).data() == m2.data());
}

}

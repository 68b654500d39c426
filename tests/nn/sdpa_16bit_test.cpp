// SPDX-License-Identifier: MIT
/// @file scaled_dot_product_attention forward and backward in float16 and bfloat16 against float64 references; see sdpa_suite.hpp.
#include "log_capture.hpp"
#include "sdpa_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
// Attention in float16 (float accumulation), flash and math backends, forward and backward, against a double-precision reference.
TEST_CASE("sdpa: random float16 problems against the double reference") {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 20; ++iter) check_random_case<half>(rng);
}

TEST_CASE("sdpa: PyTorch golden case, float16") { CHECK(check_goldens_of<half>() == 1); }
// Attention in bfloat16 (float accumulation), flash and math backends, forward and backward, against a double-precision reference.
TEST_CASE("sdpa: random bfloat16 problems against the double reference") {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 20; ++iter) check_random_case<bfloat16>(rng);
}

TEST_CASE("sdpa: PyTorch golden case, bfloat16") { CHECK(check_goldens_of<bfloat16>() == 1); }

// Where the build and the CPU have AMX-BF16, bfloat16 flash attention runs its block products on
// tiles (the random cases above then check it); dropout runs the fp32 kernels. The sdpa log says which.
TEST_CASE("sdpa: bfloat16 flash runs on AMX tiles where the CPU has them, and says so") {
  WEFT_TEST_RNG(rng);
  const Shape qs{1, 2, 40, 16}, ks{1, 2, 50, 16};
  const Tensor<bfloat16> q = tensor_of<bfloat16>(random_values<bfloat16>(rng, qs.numel()), qs),
                         k = tensor_of<bfloat16>(random_values<bfloat16>(rng, ks.numel()), ks),
                         v = tensor_of<bfloat16>(random_values<bfloat16>(rng, ks.numel()), ks);
  nn::SdpaOptions dropout;
  dropout.dropout_p = 0.1;
  weft::set_logs("sdpa");
  LogCapture capture;
  const nn::SdpaOutput<bfloat16> f = nn::sdpa_forward(q, k, v);
  nn::sdpa_backward(f.out, q, k, v, f.out, f.lse);
  nn::sdpa_forward(q, k, v, dropout);
  const std::string text = capture.text();
  capture.restore();
  weft::set_logs("");
  const bool amx = nn::detail::flash_amx_available();
  const std::string where = amx ? "yes" : "no (not built for AMX-BF16, or not permitted)";
  MESSAGE("bfloat16 flash attention on AMX tiles: " << where);
  const std::string tiles = "flash backend (cpu, amx-bf16 tiles, bfloat16";
  CHECK((text.find("nn::sdpa_forward: " + tiles) != std::string::npos) == amx);
  CHECK((text.find("nn::sdpa_backward: " + tiles) != std::string::npos) == amx);
  CHECK(text.find("flash backend (cpu, bfloat16, q [1, 2, 40, 16], k [1, 2, 50, 16], v [1, 2, 50, 16], dropout") !=
        std::string::npos);
}
}

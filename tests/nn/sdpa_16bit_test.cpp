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
// tiles, dropout excepted (it runs the fp32 kernels); where the build has FEAT_BF16, on BFMMLA,
// dropout included. The random cases above then check them. The sdpa log says which.
TEST_CASE("sdpa: bfloat16 flash runs on AMX tiles or BFMMLA where the build has them, and says so") {
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
  const bool amx = nn::detail::flash_amx_available(), bfmmla = nn::detail::flash_bfmmla_available();
  const std::string where =
      amx ? "AMX tiles" : bfmmla ? "BFMMLA" : "fp32 (not built for AMX-BF16 or FEAT_BF16, or AMX not permitted)";
  MESSAGE("bfloat16 flash attention's block products: " << where);
#ifdef WEFT_TEST_EXPECT_BF16_GEMM
  CHECK(bfmmla == (std::string(WEFT_TEST_EXPECT_BF16_GEMM) == "neon-bfmmla"));
#endif
  for (const char* op : {"nn::sdpa_forward: ", "nn::sdpa_backward: "}) {
    CHECK((text.find(op + std::string("flash backend (cpu, amx-bf16 tiles, bfloat16")) != std::string::npos) == amx);
    CHECK((text.find(op + std::string("flash backend (cpu, neon-bfmmla, bfloat16")) != std::string::npos) == bfmmla);
  }
  CHECK(text.find(std::string("flash backend (cpu, ") + (bfmmla ? "neon-bfmmla, " : "") +
                  "bfloat16, q [1, 2, 40, 16], k [1, 2, 50, 16], v [1, 2, 50, 16], dropout") != std::string::npos);
}
}

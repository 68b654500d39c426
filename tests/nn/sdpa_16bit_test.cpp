// SPDX-License-Identifier: MIT
/// @file scaled_dot_product_attention forward and backward in float16 and bfloat16 against float64 references; see sdpa_suite.hpp.
#include "log_capture.hpp"
#include "sdpa_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
// float16 attention converts to float as the armv8-a build does: not in the bfloat16 scope (tests/meson.build).
#if !WEFT_TESTS_BF16_SCOPE
// Attention in float16 (float accumulation), flash and math backends, forward and backward, against a double-precision reference.
TEST_CASE("sdpa: random float16 problems against the double reference") {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 20; ++iter) check_random_case<half>(rng);
}

TEST_CASE("sdpa: PyTorch golden case, float16") { CHECK(check_goldens_of<half>() == 1); }
#endif
// Attention in bfloat16 (float accumulation), flash and math backends, forward and backward, against a double-precision reference.
TEST_CASE("sdpa: random bfloat16 problems against the double reference") {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 20; ++iter) check_random_case<bfloat16>(rng);
}

TEST_CASE("sdpa: PyTorch golden case, bfloat16") { CHECK(check_goldens_of<bfloat16>() == 1); }

// Sizes past the flash kernels' blocks: several query blocks, strips and key chunks (the AMX
// forward runs the next strip's q k^T between the weight rows of this one), causal diagonals
// inside chunks, partial blocks at the ends; the masks, GQA, dropout and layouts stay random.
TEST_CASE("sdpa: bfloat16 problems of several blocks against the double reference") {
  WEFT_TEST_RNG(rng);
  for (const CaseSizes sizes : {CaseSizes{300, 300, 64, 64}, CaseSizes{290, 530, 128, 128}, CaseSizes{530, 170, 32, 96}})
    check_random_case<bfloat16>(rng, sizes);
}

// The AMX kernels read q, k, v and dout in place where their rows are whole 64-byte lines (unit
// column stride, head dim a multiple of 32, full blocks), else through a packed copy: both give
// the same bits. Here the same values run from aligned tensors (q also in a transposed (L, H, E)
// layout) and from copies 2 bytes past a line (every block packed); 300 rows and 270 keys make
// two full blocks of 128 and a partial one.
TEST_CASE("sdpa: bfloat16 operands read in place and through packed copies give the same bits") {
  WEFT_TEST_RNG(rng);
  for (const std::int64_t E : {32, 128})
    for (const bool causal : {false, true}) {
      CAPTURE(E);
      CAPTURE(causal);
      const std::int64_t H = 2, L = 300, S = 270;
      const Shape qs{1, H, L, E}, ks{1, H, S, E};
      auto values = [&](const Shape& shape) { return random_values<bfloat16>(rng, shape.numel()); };
      // The values as a tensor starting one element (2 bytes) past a cache line.
      auto off_line = [](const Tensor<bfloat16>& t) {
        TensorView<bfloat16> moved = weft::empty<bfloat16>(Shape{t.numel() + 1}).view().narrow(0, 1, t.numel()).view(t.shape());
        moved = t;  // a view assigns its elements
        return moved;
      };
      const std::vector<double> qv = values(qs);
      Shape stored = qs;
      std::swap(stored[1], stored[2]);  // (1, L, H, E), viewed as (1, H, L, E)
      const TensorView<bfloat16> q_aligned =
          tensor_of<bfloat16>(values_of(tensor_of<bfloat16>(qv, qs).transpose(1, 2)), stored).transpose(1, 2);
      const Tensor<bfloat16> q = tensor_of<bfloat16>(qv, qs), k = tensor_of<bfloat16>(values(ks), ks),
                             v = tensor_of<bfloat16>(values(ks), ks), dout = tensor_of<bfloat16>(values(qs), qs);
      nn::SdpaOptions o;
      o.is_causal = causal;
      auto run = [&](const auto& q_, const auto& k_, const auto& v_, const auto& dout_) {
        const nn::SdpaOutput<bfloat16> f = nn::sdpa_forward(q_, k_, v_, o);
        const nn::SdpaGradients<bfloat16> g = nn::sdpa_backward(dout_, q_, k_, v_, f.out, f.lse, o);
        return std::vector<std::vector<double>>{values_of(f.out), values_of(f.lse), values_of(g.dq), values_of(g.dk),
                                                values_of(g.dv)};
      };
      const auto in_place = run(q_aligned, k, v, dout);
      const auto packed = run(off_line(q), off_line(k), off_line(v), off_line(dout));
      const std::string names[] = {"out", "lse", "dq", "dk", "dv"};
      for (std::size_t i = 0; i < in_place.size(); ++i) {
        CAPTURE(names[i]);
        CHECK(in_place[i] == packed[i]);
      }
    }
}

// Where the build and the CPU have AMX-BF16, bfloat16 flash attention runs its block products on
// tiles, dropout excepted; where the build has AVX512-BF16 without AMX, on vdpbf16ps; where the
// build has FEAT_BF16, on BFMMLA; those two with dropout included. The random
// cases above then check them. The sdpa log says which.
TEST_CASE("sdpa: bfloat16 flash runs on AMX tiles, AVX512-BF16 or BFMMLA where the build has them, and says so") {
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
  const bool amx = weft::detail::cpu::flash::flash_amx_available(), dpbf16 = weft::detail::cpu::flash::flash_dpbf16_available(),
             bfmmla = weft::detail::cpu::flash::flash_bfmmla_available();
  const std::string where = amx      ? "AMX tiles"
                            : dpbf16 ? "AVX512-BF16 vdpbf16ps"
                            : bfmmla ? "BFMMLA"
                                     : "fp32 (not built for AMX-BF16, AVX512-BF16 or FEAT_BF16)";
  MESSAGE("bfloat16 flash attention's block products: " << where);
#ifdef WEFT_TEST_EXPECT_BF16_GEMM
  CHECK(bfmmla == (std::string(WEFT_TEST_EXPECT_BF16_GEMM) == "neon-bfmmla"));
#endif
  for (const char* op : {"nn::sdpa_forward: ", "nn::sdpa_backward: "}) {
    CHECK((text.find(op + std::string("flash backend (cpu, amx-bf16 tiles, bfloat16")) != std::string::npos) == amx);
    CHECK((text.find(op + std::string("flash backend (cpu, avx512-bf16, bfloat16")) != std::string::npos) == dpbf16);
    CHECK((text.find(op + std::string("flash backend (cpu, neon-bfmmla, bfloat16")) != std::string::npos) == bfmmla);
  }
  // Dropout: never on AMX tiles.
  CHECK(text.find(std::string("flash backend (cpu, ") + (dpbf16 ? "avx512-bf16, " : bfmmla ? "neon-bfmmla, " : "") +
                  "bfloat16, q [1, 2, 40, 16], k [1, 2, 50, 16], v [1, 2, 50, 16], dropout") != std::string::npos);
}
}

// SPDX-License-Identifier: MIT
/// @file cpu: the packet layer a build really runs, as the CPU backend reports it in its fusion log
/// (ISA name and lanes per packet, for a float and a double kernel). Built with
/// -Dtest_expect_isa=<name> (scripts/test does, per ISA level and for aarch64), it also asserts
/// that this is the expected layer: a build that silently fell back to narrower packets (no NEON,
/// no AVX2 under -march=x86-64-v3) fails here instead of passing every other test more slowly.
/// -Dtest_expect_bf16=CONVERSION:GEMM does the same for the bfloat16 stores and matmul.
#include <string>
#include <string_view>

#include <weft/ops/matmul.hpp>

#include "log_capture.hpp"
#include "pointwise_check.hpp"

using namespace weft_test;

namespace {

/// Float lanes in one register of each packet layer (weft/backend/cpu/simd/vec.hpp).
int float_lanes_of(std::string_view isa) {
  if (isa == "avx512") return 16;
  if (isa == "avx2" || isa == "avx") return 8;
  return 4;  // sse2, neon, generic: 16-byte vectors
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("isa: the CPU backend's packet layer and width, as its fusion log reports them") {
  WEFT_TEST_RNG(rng);
  const Shape s{1000};  // several packets and a tail at every width
  Tensor<float> a = random_contiguous<float>(rng, s, Domain{-4, 4});
  Tensor<double> b = random_contiguous<double>(rng, s, Domain{-4, 4});
  LogCapture capture;
  weft::set_logs("+fusion");  // debug level: every run is logged, not only a kernel type's first
  Tensor<float> ya = weft::eval(a * 2.0f + 1.0f);
  Tensor<double> yb = weft::eval(b * 2.0 + 1.0);
  weft::set_logs("");
  capture.restore();
  // 2x + 1 is exact in the float and double reference alike (2x is exact; one rounding).
  std::vector<double> av = values_of(a), bv = values_of(b), yav = values_of(ya), ybv = values_of(yb);
  std::int64_t wrong = 0;
  for (std::size_t i = 0; i < av.size(); ++i) wrong += yav[i] != round_float(2 * av[i] + 1) || ybv[i] != 2 * bv[i] + 1;
  CHECK(wrong == 0);

  const std::string isa = weft::kCpuPacketIsa, log = capture.text();
  const int lanes = float_lanes_of(isa);
  INFO("fusion log:\n", log);
  CHECK(weft::kCpuPacketBytes == 4 * lanes);
  CHECK(log.find(isa + " x" + std::to_string(lanes) + " packets") != std::string::npos);      // float kernel
  CHECK(log.find(isa + " x" + std::to_string(lanes / 2) + " packets") != std::string::npos);  // double kernel
  // scripts/test prints this line in its summary, one per build.
  std::printf("[weft tests] cpu packets: %s, %d floats / %d doubles per packet, bf16 stores: %s\n", isa.c_str(), lanes,
              lanes / 2, weft::kCpuBf16Store);
#if defined(WEFT_TEST_EXPECT_ISA)
  CHECK(isa == WEFT_TEST_EXPECT_ISA);
#endif
}

TEST_CASE("isa: the bfloat16 store conversion and matmul path the build runs") {
  const std::string conversion = weft::kCpuBf16Store, gemm = weft::detail::cpu::bf16_gemm_path();
  std::printf("[weft tests] bf16: stores %s, matmul %s\n", conversion.c_str(), gemm.c_str());
#if defined(WEFT_TEST_EXPECT_BF16_CONVERSION)
  CHECK(conversion == WEFT_TEST_EXPECT_BF16_CONVERSION);
  CHECK(gemm == WEFT_TEST_EXPECT_BF16_GEMM);
#endif
}

}  // TEST_SUITE

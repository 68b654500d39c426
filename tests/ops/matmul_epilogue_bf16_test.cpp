// SPDX-License-Identifier: MIT
/// @file cpu: bfloat16 GEMM epilogues. Where bfloat16 matmul has a native GEMM (AMX tiles, Arm
/// BFMMLA) `gelu(matmul(x, w) + bias)` runs on that GEMM's finished blocks; elsewhere unfused.
/// Either way its values equal the product evaluated into a tensor with the epilogue after it,
/// and a float64 reference within the product's bound.
#include <cmath>
#include <vector>

#include <weft/ops/matmul.hpp>

#include "epilogue_reference.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {

TEST_CASE("matmul epilogue: bfloat16 runs on the native GEMM's blocks where it runs, with the unfused values") {
  // Where bfloat16 matmul has a native GEMM (AMX tiles, Arm BFMMLA) the epilogue rides on its
  // blocks, each rounded to bfloat16 once as the unfused product is: the values equal the product
  // evaluated into a tensor and the epilogue run after it, bit for bit. Elsewhere (float math) the
  // statement runs unfused. Both are checked in double too: the product's bound in float sums,
  // plus its rounding to bfloat16 (scaled by the epilogue's slope) and the output's.
  WEFT_TEST_RNG(rng);
  const bool native = weft::detail::cpu::bf16_gemm_native();
  static const std::int64_t sizes[] = {1, 7, 16, 33, 64, 100, 257}, depths[] = {1, 5, 32, 70, 600};
  for (int iter = 0; iter < 8; ++iter) {
    const std::int64_t n = rng.pick(sizes), k = rng.pick(depths), m = rng.pick(sizes);
    const bool batched = iter % 4 == 3;
    const Shape xs = batched ? Shape{3, n, k} : Shape{n, k}, ws = batched ? Shape{1, k, m} : Shape{k, m};
    const TensorView<bfloat16> x = operand<bfloat16>(rng, xs), w = operand<bfloat16>(rng, ws);
    const TensorView<bfloat16> bias = make_view<bfloat16>(rng, Shape{m}, Domain{}, random_layout(rng, false));
    const Shape ys = batched ? Shape{3, n, m} : Shape{n, m};
    TensorView<bfloat16> y = make_destination<bfloat16>(rng, ys, random_layout(rng, false));
    INFO("x ", xs, ", w ", ws, ", native ", native);
    CHECK(ran_as_epilogue([&] { y = weft::gelu(weft::matmul(x, w) + bias); }) == native);
    const Tensor<bfloat16> product = weft::eval(weft::matmul(x, w));
    const Tensor<bfloat16> unfused = weft::gelu(product + bias);
    CHECK(values_of(y) == values_of(unfused));
    const Shape batch(ys.begin(), ys.end() - 2);
    WEFT_CHECK_REPORT(check_output(y, [&](const std::vector<std::int64_t>& idx) {
      const EpilogueProduct<bfloat16> p = epilogue_product(x, w, batch, idx);
      const double b = value_at(bias, {idx.back()});
      Expect e;
      e.want = epilogue_gelu(p.value + b);
      const double rounding = ulp_of<bfloat16>(p.value) + ulp_of<bfloat16>(p.value + b);  // product, then + bias
      e.tol = 1.2 * (p.tol + rounding) + 8 * compute_eps<bfloat16>() * (std::fabs(p.value) + std::fabs(b)) +
              ulp_of<bfloat16>(e.want);
      return e;
    }));
  }
}

}  // TEST_SUITE

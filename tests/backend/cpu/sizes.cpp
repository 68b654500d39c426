// SPDX-License-Identifier: MIT
/// @file cpu: every size from 0 to 70 (around the packet lengths: full packets plus every tail),
/// contiguous and strided, several dtypes (sizes_large.cpp has the sizes OpenMP splits).
#include "sizes_common.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {

TEST_CASE("sizes: 0 to 70 elements, contiguous and strided, several dtypes") {
  WEFT_TEST_RNG(rng);
  for (std::int64_t n = 0; n <= 70; ++n) {
    for (Layout layout : {Layout::contiguous, Layout::strided}) {
      INFO("n = ", n, ", ", std::string(layout_name(layout)));
      Shape s{n};
      Domain d{-4, 4};
      // float32: the transcendental path
      TensorView<float> a = make_view<float>(rng, s, d, layout), b = make_view<float>(rng, s, d, layout),
                    c = make_view<float>(rng, s, d, Layout::contiguous);
      TensorView<float> y = make_destination<float>(rng, s, layout);
      y = a * weft::sigmoid(b) + c;
      check_float_chain(y, a, b, c);
      // float16 in and out (16-bit loads and stores of every tail length)
      TensorView<half> h = make_view<half>(rng, s, d, layout);
      TensorView<half> yh = make_destination<half>(rng, s, layout);
      yh = h * 3 - 1;
      std::vector<double> hv = values_of(h);
      std::vector<Expect> wh;
      for (double v : hv) wh.push_back(expect_value<half, float>(RefVal{3 * v - 1, std::fabs(3 * v) + 1}, 1));
      WEFT_CHECK_REPORT(check_output(yh, wh));
      // bool out of a comparison of int32 (int lanes to bool bytes)
      TensorView<std::int32_t> i = make_view<std::int32_t>(rng, s, Domain{-3, 3}, layout);
      TensorView<bool> yb = make_destination<bool>(rng, s, layout);
      yb = i * 2 > i + 1;
      std::vector<double> iv = values_of(i);
      std::vector<Expect> wb;
      for (double v : iv) wb.push_back({2 * v > v + 1 ? 1.0 : 0.0, 0});
      WEFT_CHECK_REPORT(check_output(yb, wb));
      // float64 with an int64 operand
      TensorView<std::int64_t> k = make_view<std::int64_t>(rng, s, Domain{-1000, 1000}, layout);
      TensorView<double> yd = make_destination<double>(rng, s, layout);
      yd = weft::sqrt(weft::abs(k)) / 4;
      std::vector<double> kv = values_of(k);
      std::vector<Expect> wd;
      // sqrt of an integer tensor is float32 math (the result is converted to float64 on store)
      for (double v : kv) wd.push_back(expect_value<double, float>(rel(std::sqrt(std::fabs(v)) / 4), 1));
      WEFT_CHECK_REPORT(check_output(yd, wd));
    }
  }
}

TEST_CASE("sizes: an element's value does not depend on where its row ends") {
  // A row's last elements (fewer than a quarter packet) run as single-lane packets through the
  // packet arithmetic (cpu::SingleLaneTarget), so each element gives the same bits wherever it
  // falls. Here the same values pass through rows of every length from 1 to 40 (a narrowed wide
  // tensor: strided rows, each ending in its own tail) and through one contiguous pass; the C
  // library's erff, tanhf and expf differ from the packet forms by an ulp on some inputs, which
  // a fused GEMM epilogue (whose rows end at other places than the unfused pass's) would show.
  WEFT_TEST_RNG(rng);
  const std::int64_t rows = 64, width = 40;
  const Tensor<float> wide = random_contiguous<float>(rng, Shape{rows, width}, Domain{-6, 6});
  const Tensor<bfloat16> wide16 = weft::cast<bfloat16>(wide);
  const auto chain = [](const auto& x) { return weft::gelu(x) + weft::tanh(x) * weft::exp(x * 0.25f) - weft::sigmoid(x); };
  for (std::int64_t r = 1; r <= width; ++r) {
    INFO("rows of ", r);
    const TensorView<const float> x = wide.narrow(1, 0, r);
    const Tensor<float> packed = x.clone();  // contiguous: one linear pass
    const Tensor<float> by_rows = chain(x), flat = chain(packed);
    CHECK(values_of(by_rows) == values_of(flat));
    const TensorView<const bfloat16> x16 = wide16.narrow(1, 0, r);
    const Tensor<bfloat16> packed16 = x16.clone();
    const Tensor<bfloat16> by_rows16 = weft::gelu(x16), flat16 = weft::gelu(packed16);
    CHECK(values_of(by_rows16) == values_of(flat16));
  }
}

}  // TEST_SUITE

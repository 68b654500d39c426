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

}  // TEST_SUITE

// SPDX-License-Identifier: MIT
/// @file cpu: every size from 0 to 70 (around the packet lengths: full packets plus every tail),
/// contiguous and strided, and large sizes that OpenMP splits across threads (incl. sizes that are
/// not multiples of 16, and a destination large enough for non-temporal stores).
#if defined(_OPENMP)
#include <omp.h>
#endif

#include "log_capture.hpp"
#include "pointwise_check.hpp"

using namespace weft_test;

namespace {

/// y = a * sigmoid(b) + c for float32, checked element by element (sigmoid 4 ulp, then a product
/// and a sum: 6 ulp of the largest term).
void check_float_chain(const Tensor<float>& y, const Tensor<float>& a, const Tensor<float>& b, const Tensor<float>& c) {
  std::vector<double> av = broadcast_values(a, y.shape()), bv = broadcast_values(b, y.shape()),
                      cv = broadcast_values(c, y.shape());
  std::vector<Expect> want(av.size());
  for (std::size_t i = 0; i < av.size(); ++i) {
    double p = av[i] / (1 + std::exp(-bv[i])), v = p + cv[i];
    want[i] = {v, 6 * 0x1p-23 * (std::fabs(p) + std::fabs(cv[i]))};
  }
  WEFT_CHECK_REPORT(check_output(y, want));
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("sizes: 0 to 70 elements, contiguous and strided, several dtypes") {
  WEFT_TEST_RNG(rng);
  for (std::int64_t n = 0; n <= 70; ++n) {
    for (Layout layout : {Layout::contiguous, Layout::strided}) {
      INFO("n = ", n, ", ", std::string(layout_name(layout)));
      Shape s{n};
      Domain d{-4, 4};
      // float32: the transcendental path
      Tensor<float> a = make_view<float>(rng, s, d, layout), b = make_view<float>(rng, s, d, layout),
                    c = make_view<float>(rng, s, d, Layout::contiguous);
      Tensor<float> y = make_destination<float>(rng, s, layout);
      y = a * weft::sigmoid(b) + c;
      check_float_chain(y, a, b, c);
      // float16 in and out (16-bit loads and stores of every tail length)
      Tensor<half> h = make_view<half>(rng, s, d, layout);
      Tensor<half> yh = make_destination<half>(rng, s, layout);
      yh = h * 3 - 1;
      std::vector<double> hv = values_of(h);
      std::vector<Expect> wh;
      for (double v : hv) wh.push_back(expect_value<half, float>(RefVal{3 * v - 1, std::fabs(3 * v) + 1}, 1));
      WEFT_CHECK_REPORT(check_output(yh, wh));
      // bool out of a comparison of int32 (int lanes to bool bytes)
      Tensor<std::int32_t> i = make_view<std::int32_t>(rng, s, Domain{-3, 3}, layout);
      Tensor<bool> yb = make_destination<bool>(rng, s, layout);
      yb = i * 2 > i + 1;
      std::vector<double> iv = values_of(i);
      std::vector<Expect> wb;
      for (double v : iv) wb.push_back({2 * v > v + 1 ? 1.0 : 0.0, 0});
      WEFT_CHECK_REPORT(check_output(yb, wb));
      // float64 with an int64 operand
      Tensor<std::int64_t> k = make_view<std::int64_t>(rng, s, Domain{-1000, 1000}, layout);
      Tensor<double> yd = make_destination<double>(rng, s, layout);
      yd = weft::sqrt(weft::abs(k)) / 4;
      std::vector<double> kv = values_of(k);
      std::vector<Expect> wd;
      for (double v : kv) wd.push_back(expect_value<double, double>(rel(std::sqrt(std::fabs(v)) / 4), 1));
      WEFT_CHECK_REPORT(check_output(yd, wd));
    }
  }
}

TEST_CASE("sizes: large tensors split across threads, sizes not multiple of 16") {
  WEFT_TEST_RNG(rng);
  const std::int64_t sizes[] = {2 * 16384 + 1, 40013, 65537 + 6, 100003};
  LogCapture capture;
  weft::set_logs("+fusion");
  for (std::int64_t n : sizes) {
    INFO("n = ", n);
    Shape s{n};
    Domain d{-4, 4};
    Tensor<float> a = random_contiguous<float>(rng, s, d), b = make_view<float>(rng, s, d, Layout::strided);
    Tensor<float> c = random_contiguous<float>(rng, Shape{1}, d);  // broadcast scalar tensor
    Tensor<float> y = make_destination<float>(rng, s, Layout::contiguous);
    y = a * weft::sigmoid(b) + c;
    check_float_chain(y, a, b, c);
    // A 2-D strided destination whose rows do not line up with the thread chunks.
    std::int64_t cols = 37, rows = n / cols + 1;
    Shape s2{rows, cols};
    Tensor<float> a2 = make_view<float>(rng, s2, d, Layout::permuted), b2 = random_contiguous<float>(rng, Shape{cols}, d);
    Tensor<float> y2 = make_destination<float>(rng, s2, Layout::strided);
    y2 = a2 * weft::sigmoid(b2) + a2;
    check_float_chain(y2, a2, b2, a2);
  }
  // A destination of >= 8 MiB that the kernel does not read: non-temporal stores.
  Shape big{(std::int64_t(8) << 20) / 4 + 1001};
  Tensor<float> a = random_contiguous<float>(rng, big, Domain{-4, 4}), b = random_contiguous<float>(rng, big, Domain{-4, 4});
  Tensor<float> c = random_contiguous<float>(rng, big, Domain{-4, 4});
  Tensor<float> y = make_destination<float>(rng, big, Layout::contiguous);
  y = a * weft::sigmoid(b) + c;
  weft::set_logs("");
  capture.restore();
  check_float_chain(y, a, b, c);
  std::string text = capture.text();
  CHECK(text.find("streaming stores") != std::string::npos);
#if defined(_OPENMP)
  if (omp_get_max_threads() >= 2) CHECK(text.find("2 thread(s)") != std::string::npos);
#endif
}

}  // TEST_SUITE

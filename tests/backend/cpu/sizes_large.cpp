// SPDX-License-Identifier: MIT
/// @file cpu: large sizes that OpenMP splits across threads (not multiples of 16), and a destination large enough for non-temporal stores.
#if defined(_OPENMP)
#include <omp.h>
#endif

#include "log_capture.hpp"
#include "sizes_common.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {

TEST_CASE("sizes: large tensors split across threads, sizes not multiple of 16") {
  WEFT_TEST_RNG(rng);
  const std::int64_t sizes[] = {2 * 16384 + 1, 40013, 65537 + 6, 100003};
  LogCapture capture;
  weft::set_logs("+fusion");
  for (std::int64_t n : sizes) {
    INFO("n = ", n);
    Shape s{n};
    Domain d{-4, 4};
    TensorView<float> a = random_contiguous<float>(rng, s, d), b = make_view<float>(rng, s, d, Layout::strided);
    Tensor<float> c = random_contiguous<float>(rng, Shape{1}, d);  // broadcast scalar tensor
    TensorView<float> y = make_destination<float>(rng, s, Layout::contiguous);
    y = a * weft::sigmoid(b) + c;
    check_float_chain(y, a, b, c);
    // A 2-D strided destination whose rows do not line up with the thread chunks.
    std::int64_t cols = 37, rows = n / cols + 1;
    Shape s2{rows, cols};
    TensorView<float> a2 = make_view<float>(rng, s2, d, Layout::permuted), b2 = random_contiguous<float>(rng, Shape{cols}, d);
    TensorView<float> y2 = make_destination<float>(rng, s2, Layout::strided);
    y2 = a2 * weft::sigmoid(b2) + a2;
    check_float_chain(y2, a2, b2, a2);
  }
  // A contiguous destination of >= 8 MiB that the kernel does not read, a whole number of packets:
  // non-temporal stores.
  Shape big{(std::int64_t(8) << 20) / 4 + 1024};
  Tensor<float> a = random_contiguous<float>(rng, big, Domain{-4, 4}), b = random_contiguous<float>(rng, big, Domain{-4, 4});
  Tensor<float> c = random_contiguous<float>(rng, big, Domain{-4, 4});
  TensorView<float> y = make_destination<float>(rng, big, Layout::contiguous);
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

// SPDX-License-Identifier: MIT
/// @file The cuda suite for numbers, factories, compound assignment, eval and self-overlap on CUDA
/// tensors, and kernels over more than 2^31 elements (helpers in pointwise_suite.hpp).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backend/cuda/pointwise_suite.hpp"
#include "cuda_support.hpp"

using namespace pointwise_suite;
using weft::test::cuda_available;

TEST_SUITE("cuda") {

TEST_CASE("pointwise on cuda: numbers, factories, compound assignment, eval and self-overlap" *
          doctest::skip(!cuda_available())) {
  const Shape shape{33, 65};
  Tensor<float> y = weft::empty<float>(shape, Device::cuda());
  weft::test::poison(y);
  y = 3.5;  // a kernel without inputs
  check_result(y, [](const Index&) { return Expected{3.5, 0}; }, 0);

  Tensor<std::int64_t> z = weft::zeros<std::int64_t>(shape, Device::cuda());
  check_result(z, [](const Index&) { return Expected{0, 0}; }, 0);
  Tensor<weft::half> o = weft::full<weft::half>(shape, weft::half(0.25f), Device::cuda());
  check_result(o, [](const Index&) { return Expected{0.25, 0}; }, 0);

  Tensor<float> xh = weft::randn<float>(shape, 7);
  Tensor<float> x = xh.to(Device::cuda());
  y += x;  // y = y + x, reading y in place
  check_result(
      y,
      [&](const Index& i) {
        return Expected{3.5 + broadcast_value_at(xh, i), 3.5 + std::fabs(broadcast_value_at(xh, i))};
      },
      4);

  Tensor<float> e = weft::eval(weft::exp(x) - 1);
  CHECK(e.device() == Device::cuda());
  CHECK(e.shape() == shape);
  check_result(
      e,
      [&](const Index& i) {
        const double ev = std::exp(broadcast_value_at(xh, i));
        return Expected{ev - 1, ev + 1};
      },
      8);

  // y = transpose(y) reads elements the kernel overwrites: weft copies the input first.
  Tensor<float> sh = weft::randn<float>(Shape{127, 127}, 8);
  Tensor<float> s = sh.to(Device::cuda());
  s = s.transpose(0, 1);
  check_result(s, [&](const Index& i) { return Expected{broadcast_value_at(sh, Index{i[1], i[0]}), 0}; }, 0);

  // Logging every component must not disturb a launch.
  weft::set_logs("cuda,+fusion,output_code");
  Tensor<float> logged = weft::eval(x * weft::sigmoid(x));
  weft::set_logs("");
  check_result(
      logged,
      [&](const Index& i) {
        const double v = broadcast_value_at(xh, i), r = v / (1 + std::exp(-v));
        return Expected{r, std::fabs(r)};
      },
      8);
}

// More than 2^31 elements: the strided kernel's 64-bit index math and the
// vector kernel's 64-bit offsets. About 4.3 GB of device memory, bool outputs.
TEST_CASE("pointwise on cuda: rounding, modulo, logical ops and tests of values" * doctest::skip(!cuda_available())) {
  const Shape shape{41, 37};
  Tensor<float> xh = weft::randn<float>(shape, 11) * 4;
  Tensor<float> x = xh.to(Device::cuda());
  Tensor<float> r = weft::eval(weft::round(x) + weft::floor(x) * 2 + weft::fmod(x, 1.5) + weft::remainder(x, -2.0));
  check_result(
      r,
      [&](const Index& i) {
        const double v = broadcast_value_at(xh, i), f = std::fmod(v, 1.5), m = std::fmod(v, -2.0);
        const double rem = m != 0 && m > 0 ? m - 2.0 : m;
        const double want = std::nearbyint(v) + std::floor(v) * 2 + f + rem;
        return Expected{want, std::fabs(std::nearbyint(v)) + std::fabs(std::floor(v)) * 2 + 4};
      },
      4);
  Tensor<bool> b = weft::eval((weft::isfinite(x / (x > 0)) && (x < 1)) || weft::logical_not(x));
  check_result(
      b,
      [&](const Index& i) {
        const double v = broadcast_value_at(xh, i);
        return Expected{double((v > 0 && v < 1) || v == 0), 0};
      },
      0);
}

TEST_CASE("pointwise on cuda: more than 2^31 elements" * doctest::skip(!cuda_available())) {
  const std::int64_t rows = 46341, cols = 46341;  // rows * cols = 2^31 + 4634
  const std::int64_t n = rows * cols;
  REQUIRE(n > std::int64_t(INT32_MAX));
  std::size_t free_bytes = 0, total_bytes = 0;
  weft::detail::check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  if (free_bytes < std::size_t(2 * n) + (std::size_t(1) << 30)) {
    MESSAGE("not enough free device memory (", free_bytes, " bytes) for the 2^31-element test: not run");
    return;
  }
  std::vector<float> row_values(static_cast<std::size_t>(rows)), col_values(static_cast<std::size_t>(cols));
  for (std::int64_t r = 0; r < rows; ++r) row_values[std::size_t(r)] = float(r);
  for (std::int64_t c = 0; c < cols; ++c) col_values[std::size_t(c)] = float(c) + 0.5f;
  Tensor<float> a = weft::from_vector(row_values, Shape{rows, 1}, Device::cuda());
  Tensor<float> b = weft::from_vector(col_values, Shape{1, cols}, Device::cuda());

  Tensor<bool> y = weft::empty<bool>(Shape{rows, cols}, Device::cuda());
  weft::test::poison(y);
  y = a < b;  // broadcast operands: strided kernel; y[r, c] = r <= c
  std::vector<unsigned char> bytes = weft::test::storage_bytes(y);
  // Row r holds `below` in columns c < r and `above` from c = r on.
  auto count_wrong = [&](bool inverted) {
    const unsigned char below = inverted ? 1 : 0, above = inverted ? 0 : 1;
    std::int64_t bad = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
      const unsigned char* row = bytes.data() + r * cols;
      for (std::int64_t c = 0; c < r; ++c) bad += row[c] != below;
      for (std::int64_t c = r; c < cols; ++c) bad += row[c] != above;
    }
    return bad;
  };
  CHECK_MESSAGE(count_wrong(false) == 0, "elements of a < b differ from r <= c");

  Tensor<bool> z = weft::empty<bool>(Shape{n}, Device::cuda());
  weft::test::poison(z);
  z = y.view(Shape{n}) == false;  // contiguous: vector kernel over 2^31 + 4634 elements
  bytes = weft::test::storage_bytes(z);
  CHECK_MESSAGE(count_wrong(true) == 0, "elements of (a < b) == false differ from r > c");
}

}  // TEST_SUITE("cuda")

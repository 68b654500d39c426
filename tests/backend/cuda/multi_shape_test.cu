// SPDX-License-Identifier: MIT
/// @file The cuda suite for statements of different shapes in ONE launch (bodies in
/// multi_shape_suite.hpp), and cat(dim, e...) of expressions on a GPU.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include <weft/ops/join.hpp>

#include "backend/cuda/multi_shape_suite.hpp"
#include "cuda_support.hpp"

using weft::test::cuda_available;
using weft::test::OnCuda;

TEST_SUITE("cuda") {

TEST_CASE("fuse on cuda: four statements of four shapes in one launch" * doctest::skip(!cuda_available())) {
  for (std::uint64_t round = 0; round < 2; ++round) multi_shape_suite::statements_of_four_shapes<OnCuda>(round);
}

TEST_CASE("fuse on cuda: statements of different shapes read the values from before the call" *
          doctest::skip(!cuda_available())) {
  multi_shape_suite::statements_reading_each_other<OnCuda>(7);
}

TEST_CASE("cat on cuda: expressions joined along dim 0 and dim -1 as one kernel" * doctest::skip(!cuda_available())) {
  const weft::Device gpu = weft::Device::cuda();
  const weft::Tensor<float> x = weft::randn<float>(weft::Shape{300, 70}, 1), y = weft::randn<float>(weft::Shape{300, 9}, 2);
  const weft::Tensor<float> xd = x.to(gpu), yd = y.to(gpu);
  const std::vector<float> xv = x.to_vector(), yv = y.to_vector();
  for (std::int64_t dim : {1, -1}) {
    const weft::Tensor<float> out = weft::cat(dim, weft::exp(xd) - 1.0f, weft::sigmoid(yd) * yd, xd.narrow(1, 0, 3));
    REQUIRE(out.shape() == weft::Shape{300, 82});
    multi_shape_suite::check_close(out.view(), [&](std::int64_t i) {
      const std::int64_t r = i / 82, c = i % 82;
      if (c < 70) return std::exp(double(xv[std::size_t(r * 70 + c)])) - 1;
      if (c < 79) {
        const double v = yv[std::size_t(r * 9 + c - 70)];
        return v / (1 + std::exp(-v));
      }
      return double(xv[std::size_t(r * 70 + c - 79)]);
    }, 16 * 0x1p-24, "cat along dim 1");
  }
  const weft::Tensor<float> rows = weft::cat(0, xd.narrow(1, 0, 9) * 2, yd);
  REQUIRE(rows.shape() == weft::Shape{600, 9});
  multi_shape_suite::check_close(rows.view(), [&](std::int64_t i) {
    const std::int64_t r = i / 9, c = i % 9;
    return r < 300 ? 2.0 * xv[std::size_t(r * 70 + c)] : double(yv[std::size_t((r - 300) * 9 + c)]);
  }, 0, "cat along dim 0");
}

}  // TEST_SUITE("cuda")

// SPDX-License-Identifier: MIT
/// @file The cuda suite's bodies for statements of different shapes in one kernel (horizontal fusion),
/// run by an executor parameter: OnCuda (weft::fuse on a GPU, multi_shape_test.cu) or the host
/// emulation of the kernel's per-block body (multi_shape_host_test.cpp). Inputs are made on the
/// host, copied to the executor's device, and the results compared on the host against a double
/// reference; destinations start as NaN, which no statement here computes.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <weft/core/random.hpp>
#include <weft/ops/factories.hpp>
#include <weft/ops/fuse.hpp>
#include <weft/expr/operators.hpp>

namespace multi_shape_suite {

using weft::Device;
using weft::Shape;
using weft::Tensor;
using weft::TensorView;

inline namespace WEFT_BACKEND_ABI {  // its bodies run weft's backends (docs/architecture.md, ODR safety)

/// Every element of `got` (downloaded) against want(i) within a relative `rel` (plus `abs`).
template <class T, class Want>
void check_close(const TensorView<T>& got, Want&& want, double rel, const char* what) {
  const std::vector<std::remove_const_t<T>> values = got.to(Device::cpu()).contiguous().to_vector();
  std::int64_t wrong = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double w = want(std::int64_t(i)), g = double(values[i]);
    if (!(std::fabs(g - w) <= rel * std::fabs(w) + 1e-30)) {
      if (wrong++ < 4) MESSAGE(what, ": element ", i, " is ", g, ", want ", w);
    }
  }
  CHECK_MESSAGE(wrong == 0, what, ": ", wrong, " of ", values.size(), " elements wrong");
}

/// One kernel of four statements of four shapes: two slices of one output along its last dim (a
/// cat), a long vector, a transposed destination; inputs broadcast, cast, strided.
template <class Exec>
void statements_of_four_shapes(std::uint64_t seed) {
  const Device device = Exec::device();
  const Tensor<float> x = weft::randn<float>(Shape{37, 129}, seed), y = weft::randn<float>(Shape{4099}, seed + 1);
  const Tensor<float> row = weft::randn<float>(Shape{5}, seed + 2);
  const Tensor<std::int32_t> n = weft::cast<std::int32_t>(weft::randn<float>(Shape{37, 5}, seed + 3) * 100);
  const Tensor<float> xd = x.to(device), yd = y.to(device), rowd = row.to(device);
  const Tensor<std::int32_t> nd = n.to(device);
  Tensor<float> out = weft::full<float>(Shape{37, 134}, NAN, device), w = weft::full<float>(Shape{4099}, NAN, device);
  Tensor<double> t = weft::full<double>(Shape{129, 37}, NAN, device);
  const TensorView<float> left = out.narrow(1, 0, 129), right = out.narrow(1, 129, 5);
  const TensorView<double> tv = t.transpose(0, 1);
  Exec::run(weft::assign(left, xd * 0.5f + weft::tanh(xd)), weft::assign(right, weft::cast<float>(nd) + rowd),
            weft::assign(w.view(), weft::sigmoid(yd) * yd), weft::assign(tv, xd.narrow(1, 0, 129) * 2));
  const std::vector<float> xv = x.to_vector(), yv = y.to_vector(), rv = row.to_vector();
  const std::vector<std::int32_t> nv = n.to_vector();
  const double eps = 0x1p-24;
  check_close(out.view(), [&](std::int64_t i) {
    const std::int64_t r = i / 134, c = i % 134;
    if (c < 129) {
      const double v = xv[std::size_t(r * 129 + c)];
      return v * 0.5 + std::tanh(v);
    }
    return double(nv[std::size_t(r * 5 + c - 129)]) + rv[std::size_t(c - 129)];
  }, 16 * eps, "cat-like slices");
  check_close(w.view(), [&](std::int64_t i) {
    const double v = yv[std::size_t(i)];
    return v / (1 + std::exp(-v));
  }, 16 * eps, "sigmoid(y) * y");
  check_close(t.view(), [&](std::int64_t i) { return 2.0 * xv[std::size_t((i % 37) * 129 + i / 37)]; }, 0,
              "transposed destination");
}

/// Statements of different shapes that read another statement's destination get its values from
/// before the call: y doubles in place while z reads y transposed and u reads y's first row.
template <class Exec>
void statements_reading_each_other(std::uint64_t seed) {
  const Device device = Exec::device();
  const Tensor<float> y0 = weft::randn<float>(Shape{61, 33}, seed);
  Tensor<float> y = y0.to(device);
  Tensor<float> z = weft::full<float>(Shape{33, 61}, NAN, device), u = weft::full<float>(Shape{33}, NAN, device);
  Exec::run(weft::assign(y.view(), y * 2), weft::assign(z.view(), y.transpose(0, 1) + 1),
            weft::assign(u.view(), y.select(0, 0) - 1));
  const std::vector<float> v = y0.to_vector();
  check_close(y.view(), [&](std::int64_t i) { return 2.0 * v[std::size_t(i)]; }, 0, "y * 2 in place");
  check_close(z.view(), [&](std::int64_t i) { return double(float(v[std::size_t((i % 61) * 33 + i / 61)] + 1.0f)); }, 0,
              "transpose of the old y");
  check_close(u.view(), [&](std::int64_t i) { return double(float(v[std::size_t(i)] - 1.0f)); }, 0, "old first row");
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace multi_shape_suite

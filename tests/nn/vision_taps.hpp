// SPDX-License-Identifier: MIT
/// @file The pooling and interpolation tests' reference: random [N, C, H, W] inputs in three memory layouts, and ops given as taps (output = sum of weight x input), checked forward and backward in double.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>
#include <weft/backend/threads.hpp>

#include "reference.hpp"

namespace weft_test {

/// How a test input lies in memory: NCHW, channels-last (NHWC memory, the permuted view of an
/// [N, H, W, C] tensor) or with H and W swapped in memory (W not the contiguous dim).
enum class VisionLayout { nchw, channels_last, w_strided };
inline constexpr VisionLayout kVisionLayouts[] = {VisionLayout::nchw, VisionLayout::channels_last,
                                                  VisionLayout::w_strided};
inline const char* vision_layout_name(VisionLayout l) {
  return l == VisionLayout::nchw ? "nchw" : l == VisionLayout::channels_last ? "channels_last" : "w_strided";
}

/// A random [N, C, H, W] input: the tensor that owns it and the NCHW-shaped view of it, values
/// uniform in [-2, 2) rounded to T.
template <class T>
struct VisionInput {
  Tensor<T> storage;
  TensorView<const T> x;
};
template <class T>
VisionInput<T> vision_input(Rng& rng, const Shape& s, VisionLayout layout) {
  Tensor<T> storage = layout == VisionLayout::nchw            ? weft::empty<T>(s)
                      : layout == VisionLayout::channels_last ? weft::empty<T>(Shape{s[0], s[2], s[3], s[1]})
                                                              : weft::empty<T>(Shape{s[0], s[1], s[3], s[2]});
  for (std::int64_t i = 0; i < storage.numel(); ++i) storage.data()[i] = make_value<T>(round_to<T>(rng.uniform(-2, 2)));
  const TensorView<const T> v = static_cast<const Tensor<T>&>(storage).view();
  const TensorView<const T> x = layout == VisionLayout::nchw            ? v
                                : layout == VisionLayout::channels_last ? v.permute({0, 3, 1, 2})
                                                                        : v.permute({0, 1, 3, 2});
  return VisionInput<T>{std::move(storage), x};  // the view shares the moved tensor's elements
}

/// An element's exact value (decoded from its bytes).
template <class T>
double value_of(const T& v) {
  return decode<T>(reinterpret_cast<const unsigned char*>(&v));
}

/// Element (n, c, h, w) of an [N, C, H, W] view, read through its strides, as a double.
template <class T>
double vision_at(const TensorView<const T>& x, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
  const auto& st = x.strides();
  return value_of(x.data()[n * st[0] + c * st[1] + h * st[2] + w * st[3]]);
}

/// One output of a linear op as taps over its input plane: (flat index h W + w, weight).
using Taps = std::vector<std::pair<std::int64_t, double>>;

/// Checks y = op(x) against y[n, c, o] = sum of weight x[n, c, index] over taps_of(n, c)[o] for
/// every output o (row-major over the output plane) of every plane (n, c), in double. Bound: the sum of
/// |weight x| times (taps + 2) eps of the compute type (the running sum's roundings, the weights'
/// own), plus `weight_error` times the sum of |x| (weights computed in the compute type from
/// positions of size up to max(H, W)), plus an ulp of T (the final rounding).
template <class T, class TapsOf>
void check_taps_forward(const Tensor<T>& y, const TensorView<const T>& x, const TapsOf& taps_of,
                        double weight_error = 0) {
  const auto& s = x.shape();
  REQUIRE(y.dim() == 4);
  REQUIRE(y.shape()[0] == s[0]);
  REQUIRE(y.shape()[1] == s[1]);
  REQUIRE(y.is_contiguous());
  constexpr double eps = compute_eps<T>();
  const std::int64_t plane = y.shape()[2] * y.shape()[3];
  for (std::int64_t n = 0; n < s[0]; ++n)
    for (std::int64_t c = 0; c < s[1]; ++c) {
      const std::vector<Taps>& taps = taps_of(n, c);
      REQUIRE(std::int64_t(taps.size()) == plane);
      for (std::int64_t o = 0; o < plane; ++o) {
        double want = 0, mag = 0, xmag = 0;
        for (const auto& [i, w] : taps[std::size_t(o)]) {
          const double v = vision_at(x, n, c, i / s[3], i % s[3]);
          want += w * v, mag += std::fabs(w * v), xmag += std::fabs(v);
        }
        const double got = value_of(y.data()[(n * s[1] + c) * plane + o]);
        const double tol = double(taps[std::size_t(o)].size() + 2) * eps * mag + weight_error * xmag + ulp_of<T>(want);
        INFO("output ", o, " of plane (", n, ", ", c, "): got ", got, ", want ", want);
        CHECK(std::fabs(got - want) <= tol);
      }
    }
}

/// Checks dx = the op's backward(dy) against dx[n, c, i] = sum of weight dy[n, c, o] over the
/// taps (i, weight) of every output o: the transpose of check_taps_forward's sum, same bounds.
template <class T, class TapsOf>
void check_taps_backward(const Tensor<T>& dx, const Shape& input_shape, const TensorView<const T>& dy,
                         const TapsOf& taps_of, double weight_error = 0) {
  REQUIRE(dx.shape() == input_shape);
  REQUIRE(dx.is_contiguous());
  constexpr double eps = compute_eps<T>();
  const std::int64_t in_plane = input_shape[2] * input_shape[3], out_plane = dy.shape()[2] * dy.shape()[3];
  for (std::int64_t n = 0; n < input_shape[0]; ++n)
    for (std::int64_t c = 0; c < input_shape[1]; ++c) {
      const std::vector<Taps>& taps = taps_of(n, c);
      std::vector<double> want(std::size_t(in_plane), 0.0), mag(std::size_t(in_plane), 0.0),
          gmag(std::size_t(in_plane), 0.0), count(std::size_t(in_plane), 0.0);
      for (std::int64_t o = 0; o < out_plane; ++o) {
        const double g = vision_at(dy, n, c, o / dy.shape()[3], o % dy.shape()[3]);
        for (const auto& [i, w] : taps[std::size_t(o)]) {
          const std::size_t k = std::size_t(i);
          want[k] += w * g, mag[k] += std::fabs(w * g), gmag[k] += std::fabs(g), count[k] += 1;
        }
      }
      for (std::int64_t i = 0; i < in_plane; ++i) {
        const std::size_t k = std::size_t(i);
        const double got = value_of(dx.data()[(n * input_shape[1] + c) * in_plane + i]);
        const double tol = (count[k] + 2) * eps * mag[k] + weight_error * gmag[k] + ulp_of<T>(want[k]);
        INFO("input ", i, " of plane (", n, ", ", c, "): got ", got, ", want ", want[k]);
        CHECK(std::fabs(got - want[k]) <= tol);
      }
    }
}

/// taps_of for an op whose taps are the same in every plane.
inline auto same_taps(const std::vector<Taps>& taps) {
  return [&taps](std::int64_t, std::int64_t) -> const std::vector<Taps>& { return taps; };
}

/// Runs `results` (some ops' outputs as float vectors) on 1 thread and on 2, then restores the
/// thread count, and checks that every result has the same bits both times.
template <class Results>
void check_same_on_1_and_2_threads(Results&& results) {
  const int threads = weft::get_num_threads();
  weft::set_num_threads(1);
  const std::vector<std::vector<float>> one = results();
  weft::set_num_threads(2);
  const std::vector<std::vector<float>> two = results();
  weft::set_num_threads(threads);
  REQUIRE(one.size() == two.size());
  for (std::size_t k = 0; k < one.size(); ++k) {
    INFO("result ", k);
    CHECK(one[k] == two[k]);
  }
}

/// A random gradient dy of the given shape (a contiguous tensor).
template <class T>
Tensor<T> vision_gradient(Rng& rng, const Shape& shape) {
  Tensor<T> dy = weft::empty<T>(shape);
  for (std::int64_t i = 0; i < dy.numel(); ++i) dy.data()[i] = make_value<T>(round_to<T>(rng.uniform(-1, 1)));
  return dy;
}

}  // namespace weft_test

// SPDX-License-Identifier: MIT
/// @file Test helpers for TensorLists: random lists, their values as doubles, element-wise checks.
#pragma once

#include "reference.hpp"

#include <weft/core/tensor_list.hpp>

#include <vector>

namespace weft_test {

using weft::ScalarList;
using weft::TensorList;


/// List lengths worth testing: empty, one, two, a prime and a long list.
inline constexpr std::size_t kLengths[] = {0, 1, 2, 37, 1000};

/// A random shape per tensor: empty tensors, 1, sizes around the vector width, a few large ones.
inline Shape member_shape(Rng& rng, std::size_t length) {
  static const std::int64_t sizes[] = {0, 1, 3, 15, 16, 17, 31, 33, 100, 257};
  if (length < 50 && rng.chance(0.1)) return Shape{rng.integer(20000, 70000)};  // splits across threads
  return rng.chance(0.5) ? Shape{rng.pick(sizes)} : Shape{rng.pick(sizes), rng.integer(1, 5)};
}

/// member_shape for each tensor of a list of `length`.
inline std::vector<Shape> member_shapes(Rng& rng, std::size_t length) {
  std::vector<Shape> shapes;
  for (std::size_t k = 0; k < length; ++k) shapes.push_back(member_shape(rng, length));
  return shapes;
}

/// Random values in [lo, hi) of dtype T with a given shape (from_vector: exact for every dtype).
template <class T>
Tensor<T> random_tensor(Rng& rng, const Shape& shape, double lo, double hi) {
  std::vector<T> v(std::size_t(shape.numel()));
  for (auto& x : v) x = T(float(rng.uniform(lo, hi)));
  return weft::from_vector<T>(v, shape);
}

template <class T>
TensorList<T> random_list(Rng& rng, const std::vector<Shape>& shapes, double lo, double hi) {
  TensorList<T> list;
  for (const Shape& s : shapes) list.push_back(random_tensor<T>(rng, s, lo, hi));
  return list;
}

template <class T>
std::vector<std::vector<double>> values_of_list(const TensorList<T>& list) {
  std::vector<std::vector<double>> out;
  for (const auto& t : list) out.push_back(values_of(t));
  return out;
}

/// got == want within tolerance(k, i) for element i of tensor k, for every element.
template <class T, class Tolerance>
void check_list_within(const TensorList<T>& got, const std::vector<std::vector<double>>& want, Tolerance tolerance) {
  REQUIRE(got.size() == want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    std::vector<double> g = values_of(got[k]);
    REQUIRE(g.size() == want[k].size());
    for (std::size_t i = 0; i < g.size(); ++i) {
      const double tol = tolerance(k, i);
      if (!(std::fabs(g[i] - want[k][i]) <= tol)) {
        INFO("tensor ", k, " element ", i, ": got ", g[i], ", want ", want[k][i], ", tolerance ", tol);
        CHECK(std::fabs(g[i] - want[k][i]) <= tol);
        return;
      }
    }
  }
}

/// got == want within `tol_ulps` ulps of T at the larger of |want| and `scale`, for every element.
template <class T>
void check_list(const TensorList<T>& got, const std::vector<std::vector<double>>& want, double tol_ulps,
                double scale) {
  check_list_within(got, want, [&](std::size_t k, std::size_t i) {
    return tol_ulps * ulp_of<T>(std::max(std::fabs(want[k][i]), scale));
  });
}


}  // namespace weft_test

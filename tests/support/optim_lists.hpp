// SPDX-License-Identifier: MIT
/// @file The parameter lists the optimizer tests step: a few shapes, random positive values, copies and their elements.
#pragma once

#include <vector>

#include "reference.hpp"

namespace weft_test {

/// Parameter shapes of every rank the optimizer tests use.
inline const std::vector<Shape> kOptimShapes = {Shape{4, 3}, Shape{7}, Shape{2, 2, 2}};

/// A list of tensors of these shapes with random values in [0.1, 2).
template <class T = float>
weft::TensorList<T> random_list(Rng& rng, const std::vector<Shape>& shapes) {
  weft::TensorList<T> list;
  for (const Shape& s : shapes) list.push_back(random_contiguous<T>(rng, s, Domain{0.1, 2.0, false, true}));
  return list;
}

/// A list of copies of the list's tensors.
template <class T>
weft::TensorList<T> clone_list(const weft::TensorList<T>& list) {
  weft::TensorList<T> out;
  for (const auto& t : list) out.push_back(t.clone());
  return out;
}

/// The elements of each tensor of the list.
template <class T>
std::vector<std::vector<T>> list_values(const weft::TensorList<T>& list) {
  std::vector<std::vector<T>> out;
  for (const auto& t : list) out.push_back(t.to_vector());
  return out;
}

}  // namespace weft_test

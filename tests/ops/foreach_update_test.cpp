// SPDX-License-Identifier: MIT
/// @file Foreach updates over random lists of every float dtype, checked tensor by tensor in double precision.
#include "list_reference.hpp"

#include <string>
#include <vector>

using namespace weft_test;

TEST_SUITE("cpu") {


// p = p - lr * g over random lists: float math, one rounding at the store, so the error is the
// float rounding of lr*g and of the subtraction (<= 2 ulps of max(|p|, |lr g|)), plus one ulp of
// the output type for 16-bit outputs.
TEST_CASE_TEMPLATE("foreach: p = p - lr * g over random lists, every element written", T, float, double, weft::half,
                   weft::bfloat16) {
  WEFT_TEST_RNG(rng);
  for (std::size_t length : kLengths) {
    CAPTURE(length);
    std::vector<Shape> shapes;
    for (std::size_t k = 0; k < length; ++k) shapes.push_back(member_shape(rng, length));
    TensorList<T> p = random_list<T>(rng, shapes, -2, 2), g = random_list<T>(rng, shapes, -2, 2);
    const double lr = 0.37;
    auto pv = values_of_list(p), gv = values_of_list(g);
    for (std::size_t k = 0; k < length; ++k)
      for (std::size_t i = 0; i < pv[k].size(); ++i) pv[k][i] = pv[k][i] - lr * gv[k][i];
    TensorList<T> out;
    for (const Shape& s : shapes) {
      out.push_back(weft::empty<T>(s));
      poison(out[out.size() - 1]);
    }
    out = p - lr * g;
    check_list(out, pv, 3, 1.0);
    p -= lr * g;  // in place: each input element is read before its own output is written
    check_list(p, pv, 3, 1.0);
  }
}

}  // TEST_SUITE

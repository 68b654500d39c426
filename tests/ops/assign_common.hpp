// SPDX-License-Identifier: MIT
/// @file Helpers of the assignment tests (assign.cpp, assign_compound.cpp): seeded destinations
/// and a random-layout driver for compound assignment.
#pragma once

#include "pointwise_check.hpp"

namespace weft_test {

/// A destination view with known values inside and poison around it (in the same storage).
template <class T>
TensorView<T> seeded_destination(Rng& rng, const Shape& shape, const Domain& d, std::vector<double>& values) {
  TensorView<T> y = make_destination<T>(rng, shape, random_layout(rng, true));
  Tensor<T> src = random_contiguous<T>(rng, shape, d);
  values = values_of(src);
  write_values(y, values);
  return y;
}

/// Runs `y op= e` for random shapes / layouts and checks against ref(old y, rhs value).
template <class T, class R, class Apply, class Ref>
void check_compound(const char* what, Rng& rng, Domain dy, Domain dr, Apply apply, Ref ref) {
  INFO("op: ", std::string(what));
  for (int trial = 0; trial < 10; ++trial) {
    Shape shape = random_shape(rng, 0, 4, 2000);
    std::vector<double> old;
    TensorView<T> y = seeded_destination<T>(rng, shape, dy, old);
    TensorView<R> rhs = make_view<R>(rng, trial == 0 ? shape : broadcastable_to(rng, shape), dr, random_layout(rng, false));
    INFO("y ", shape_str(shape), y.is_contiguous() ? "" : " (strided)", ", rhs ", shape_str(rhs.shape()));
    std::vector<double> r = broadcast_values(rhs, shape);
    apply(y, rhs);
    std::vector<Expect> want(old.size());
    for (std::size_t i = 0; i < old.size(); ++i) want[i] = ref(old[i], r[i]);
    WEFT_CHECK_REPORT(check_output(y, want));
  }
}

/// Tolerance of one correctly rounded op computed in C and stored to T (see pointwise_check.hpp).
template <class T, class C>
Expect one_op(double v) {
  return expect_value<T, C>(rel(v), 1);
}

}  // namespace weft_test

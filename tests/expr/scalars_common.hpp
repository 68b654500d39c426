// SPDX-License-Identifier: MIT
/// @file C++ numbers mixed with tensors (scalars_test.cpp). PyTorch's wrapped-number rule decides the
/// result dtype (written out in each check: half * 2.5 stays half, int * 2.5 is float32, bool + 1
/// is int64, ...), and a number is converted once to the compute type (so float - 0.1 subtracts
/// float(0.1)).
#pragma once

#include "pointwise_check.hpp"

namespace weft_test {

/// The number as the kernel sees it: converted to the compute type C of the op.
template <class C>
double as_seen(double v) {
  return scalar_in<C>(v);
}

inline const Domain kSmall{-8, 8, false, true, 0.05, 0, 0.0, 0.125};
inline const Domain kInts{-50, 50, false, true, 0.05};

}  // namespace weft_test

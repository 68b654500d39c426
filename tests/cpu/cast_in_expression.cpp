// SPDX-License-Identifier: MIT
/// @file cpu: cast<U> inside an expression rounds there, and only there (16-bit intermediates are
/// otherwise kept in float).
#include "cast_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("cast inside an expression rounds there, and only there") {
  // cast<half>(x * 3) * 2 is a half expression: the product is computed in float and rounded to
  // half by the cast, then doubled in float (exact) and stored as half (exact: below 65504).
  Rng rng = named_rng("cast inside", 1);
  check_op<half, float>("cast<half>(x * 3) * 2", rng, {Domain{1e-6, 1e4, true, true}}, 0,
                        [](const auto& x) { return weft::cast<half>(x * 3) * 2; },
                        [](double x) { return stored(2 * round_half(round_float(x * 3))); });
  // Without the cast the same chain keeps float precision until the store.
  check_op<half, half>("(x * 3) * 2 stored to half", rng, {Domain{1e-3, 1e4, true, true}}, 1,
                       [](const auto& x) { return x * 3 * 2; }, [](double x) { return rel(x * 6); });
  // cast<int32> truncates toward zero inside an expression too, then the sum is exact.
  check_op<std::int32_t, float>("cast<int32>(x) + 1", rng, {Domain{0.01, 1e6, true, true}}, 0,
                                [](const auto& x) { return weft::cast<std::int32_t>(x) + 1; },
                                [](double x) { return stored(std::trunc(x) + 1); });
}
}

// SPDX-License-Identifier: MIT
/// @file cast<U>(x) between every pair of dtypes, bit-exact, and casts inside expressions; see cast_suite.hpp.
/// The ISA-level builds (tests_scope=isa) run the cases of cast_from_bfloat16, cast_from_float16 only: the packet code the other dtypes add is the same.
#include "cast_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("cast from bfloat16 to the floating dtypes") { run_casts_from<bfloat16, true>(); }
TEST_CASE("cast from bfloat16 to int32, int64, bool") { run_casts_from<bfloat16, false>(); }
TEST_CASE("cast from float16 to the floating dtypes") { run_casts_from<half, true>(); }
TEST_CASE("cast from float16 to int32, int64, bool") { run_casts_from<half, false>(); }
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("cast from float32 to the floating dtypes") { run_casts_from<float, true>(); }
TEST_CASE("cast from float32 to int32, int64, bool") { run_casts_from<float, false>(); }
#endif
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("cast from float64 to the floating dtypes") { run_casts_from<double, true>(); }
TEST_CASE("cast from float64 to int32, int64, bool") { run_casts_from<double, false>(); }
#endif
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("cast from int32 to the floating dtypes") { run_casts_from<std::int32_t, true>(); }
TEST_CASE("cast from int32 to int32, int64, bool") { run_casts_from<std::int32_t, false>(); }
#endif
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("cast from int64 to the floating dtypes") { run_casts_from<std::int64_t, true>(); }
TEST_CASE("cast from int64 to int32, int64, bool") { run_casts_from<std::int64_t, false>(); }
#endif
#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("cast from bool to the floating dtypes") { run_casts_from<bool, true>(); }
TEST_CASE("cast from bool to int32, int64, bool") { run_casts_from<bool, false>(); }
#endif
#if !WEFT_TESTS_ISA_SCOPE
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
#endif
}

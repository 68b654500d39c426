// SPDX-License-Identifier: MIT
/// @file cpu: weft::fuse with several outputs: every right-hand side reads the values from before the
/// statement (swaps work), outputs of different dtypes and layouts, empty destinations allocated.
#include "pointwise_check.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {

TEST_CASE("fuse: fuse(assign(a, b), assign(b, a)) swaps, for any layouts") {
  WEFT_TEST_RNG(rng);
  for (int trial = 0; trial < 20; ++trial) {
    Shape shape = random_shape(rng, 0, 4, trial % 5 == 4 ? 50000 : 2000);
    TensorView<float> a = make_destination<float>(rng, shape, random_layout(rng, true));
    TensorView<float> b = make_destination<float>(rng, shape, random_layout(rng, true));
    std::vector<double> av = values_of(random_contiguous<float>(rng, shape, Domain{-5, 5}));
    std::vector<double> bv = values_of(random_contiguous<float>(rng, shape, Domain{-5, 5}));
    write_values(a, av);
    write_values(b, bv);
    INFO("shape ", shape_str(shape), a.is_contiguous() ? "" : ", a strided", b.is_contiguous() ? "" : ", b strided");
    weft::fuse(weft::assign(a, b), weft::assign(b, a));
    std::vector<Expect> wa, wb;
    for (double v : bv) wa.push_back({v, 0});
    for (double v : av) wb.push_back({v, 0});
    WEFT_CHECK_REPORT(check_output(a, wa));
    WEFT_CHECK_REPORT(check_output(b, wb));
  }
}

TEST_CASE("fuse: each statement reads pre-statement values (a = a + b; b = a * b uses the old a)") {
  WEFT_TEST_RNG(rng);
  for (int trial = 0; trial < 10; ++trial) {
    Shape shape = random_shape(rng, 1, 3, trial == 9 ? 60000 : 3000);
    TensorView<double> a = make_destination<double>(rng, shape, random_layout(rng, true));
    TensorView<double> b = make_destination<double>(rng, shape, random_layout(rng, true));
    // Integer-valued doubles: every sum and product below is exact, so any use of an updated
    // value shows up as a wrong element.
    std::vector<double> av = values_of(random_contiguous<std::int32_t>(rng, shape, Domain{-1000, 1000}));
    std::vector<double> bv = values_of(random_contiguous<std::int32_t>(rng, shape, Domain{-1000, 1000}));
    write_values(a, av);
    write_values(b, bv);
    weft::fuse(weft::assign(a, a + b), weft::assign(b, a * b));
    std::vector<Expect> wa, wb;
    for (std::size_t i = 0; i < av.size(); ++i) {
      wa.push_back({av[i] + bv[i], 0});
      wb.push_back({av[i] * bv[i], 0});
    }
    WEFT_CHECK_REPORT(check_output(a, wa));
    WEFT_CHECK_REPORT(check_output(b, wb));
  }
}

}  // TEST_SUITE

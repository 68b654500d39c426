// SPDX-License-Identifier: MIT
/// @file cpu: weft::fuse with outputs of different dtypes and layouts from shared operands, and empty destinations.
#include "pointwise_check.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {

TEST_CASE("fuse: outputs of different dtypes and layouts from shared operands") {
  WEFT_TEST_RNG(rng);
  for (int trial = 0; trial < 12; ++trial) {
    Shape shape = random_shape(rng, 0, 4, trial % 4 == 3 ? 40000 : 2500);
    TensorView<float> a = make_view<float>(rng, broadcastable_to(rng, shape), Domain{-4, 4}, random_layout(rng, false));
    TensorView<half> b = make_view<half>(rng, broadcastable_to(rng, shape), Domain{-4, 4}, random_layout(rng, false));
    TensorView<float> y0 = make_destination<float>(rng, shape, random_layout(rng, true));
    TensorView<half> y1 = make_destination<half>(rng, shape, random_layout(rng, true));
    TensorView<bool> y2 = make_destination<bool>(rng, shape, random_layout(rng, true));
    TensorView<std::int32_t> y3 = make_destination<std::int32_t>(rng, shape, random_layout(rng, true));
    auto s = weft::sigmoid(a) * b;  // shared by two statements
    INFO("shape ", shape_str(shape), ", a ", shape_str(a.shape()), ", b ", shape_str(b.shape()));
    weft::fuse(weft::assign(y0, s + 1), weft::assign(y1, s * 3), weft::assign(y2, a < b),
               weft::assign(y3, weft::cast<std::int32_t>(a * 10)));
    std::vector<double> av = broadcast_values(a, shape), bv = broadcast_values(b, shape);
    std::vector<Expect> w0, w1, w2, w3;
    for (std::size_t i = 0; i < av.size(); ++i) {
      double sg = 1 / (1 + std::exp(-av[i])), sv = sg * bv[i];
      // s: sigmoid (4 ulp) times b (1 more rounding); then + 1 or * 3 (one more rounding)
      double es = (4 * 0x1p-23 + 0x1p-24) * std::fabs(sv);
      w0.push_back({sv + 1, es + 0x1p-24 * std::fabs(sv + 1) + 1e-300});
      double e1 = 3 * es + 0x1p-24 * std::fabs(3 * sv);
      w1.push_back({3 * sv, e1 + 0.5 * ulp_of<half>(std::fabs(3 * sv) + e1)});
      w2.push_back({av[i] < bv[i] ? 1.0 : 0.0, 0});
      double p = round_float(av[i] * 10);
      w3.push_back({std::trunc(p), 0});
    }
    WEFT_CHECK_REPORT(check_output(y0, w0));
    WEFT_CHECK_REPORT(check_output(y1, w1));
    WEFT_CHECK_REPORT(check_output(y2, w2));
    WEFT_CHECK_REPORT(check_output(y3, w3));
  }
}

TEST_CASE("fuse: empty tensors get the shape, a view broadcasts; one statement works like assignment") {
  WEFT_TEST_RNG(rng);
  TensorView<float> a = make_view<float>(rng, Shape{6, 7}, Domain{-4, 4}, Layout::permuted);
  Tensor<float> row = random_contiguous<float>(rng, Shape{7}, Domain{-4, 4});
  Tensor<float> y0, y1;
  Tensor<double> y2 = weft::zeros<double>(Shape{6, 7});
  weft::fuse(weft::assign(y0, a + row), weft::assign(y1, a - row), weft::assign(y2.view(), row * 2));
  CHECK(y0.shape() == Shape{6, 7});
  CHECK(y1.shape() == Shape{6, 7});
  CHECK(y0.is_contiguous());
  std::vector<double> av = values_of(a), rv = values_of(row), v0 = values_of(y0), v1 = values_of(y1), v2 = values_of(y2);
  for (std::size_t i = 0; i < 42; ++i) {
    CHECK(v0[i] == round_float(av[i] + rv[i % 7]));
    CHECK(v1[i] == round_float(av[i] - rv[i % 7]));
    CHECK(v2[i] == rv[i % 7] * 2);
  }
  Tensor<float> z;
  weft::fuse(weft::assign(z, weft::abs(a)));
  CHECK(z.shape() == a.shape());
  std::vector<double> zv = values_of(z);
  for (std::size_t i = 0; i < 42; ++i) CHECK(zv[i] == std::fabs(av[i]));
}

}  // TEST_SUITE

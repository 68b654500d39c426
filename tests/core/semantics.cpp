// SPDX-License-Identifier: MIT
/// @file core: handle vs value semantics (copies share storage, assignment writes values, an empty
/// tensor is allocated by its first assignment, assignment broadcasts and converts dtypes).
#include "reference.hpp"

using namespace weft_test;

TEST_SUITE("core") {

TEST_CASE("semantics: copying a Tensor shares storage, assigning writes values") {
  WEFT_TEST_RNG(rng);
  Tensor<float> x = random_contiguous<float>(rng, Shape{3, 4}, Domain{1, 2});
  const std::vector<double> x0 = values_of(x);

  Tensor<float> shared = x;  // construction: a handle copy
  CHECK(shared.data() == x.data());
  CHECK(shared.storage() == x.storage());
  auto by_value = [](Tensor<float> t) { return t.data(); };
  CHECK(by_value(x) == x.data());

  Tensor<float> y = weft::zeros<float>(Shape{3, 4});
  float* y_data = y.data();
  y = x;  // assignment: values are copied into y's own storage
  CHECK(y.data() == y_data);
  CHECK(y.storage() != x.storage());
  CHECK(values_of(y) == x0);
  x = 5.0;  // writes x's storage; `shared` sees it, y does not
  CHECK(values_of(shared) == std::vector<double>(12, 5.0));
  CHECK(values_of(y) == x0);

  // Moving a defined tensor into a defined tensor also writes values (never rebinds).
  Tensor<float> z = weft::zeros<float>(Shape{3, 4});
  float* z_data = z.data();
  z = std::move(y);
  CHECK(z.data() == z_data);
  CHECK(values_of(z) == x0);

  // Self-assignment is harmless.
  z = z;
  CHECK(values_of(z) == x0);
}

TEST_CASE("semantics: an empty tensor is allocated by its first assignment") {
  WEFT_TEST_RNG(rng);
  Tensor<double> x = make_view<double>(rng, Shape{5, 7}, Domain{-3, 3}, Layout::permuted_strided);
  Tensor<double> y;
  CHECK(!y.defined());
  CHECK(y.data() == nullptr);
  y = x;
  CHECK(y.defined());
  CHECK(y.shape() == x.shape());
  CHECK(y.is_contiguous());
  CHECK(y.storage() != x.storage());
  CHECK(values_of(y) == values_of(x));

  // From an expression: the expression's shape (broadcast of its operands) and dtype.
  Tensor<double> row = random_contiguous<double>(rng, Shape{7}, Domain{-3, 3});
  Tensor<double> e;
  e = x * 2.0 + row;
  CHECK(e.shape() == Shape{5, 7});
  std::vector<double> xv = values_of(x), rv = values_of(row), ev = values_of(e);
  for (std::size_t i = 0; i < 35; ++i) CHECK(ev[i] == xv[i] * 2.0 + rv[i % 7]);

  // An rvalue tensor is adopted by an empty tensor (no copy).
  Tensor<double> fresh = weft::zeros<double>(Shape{2});
  double* p = fresh.data();
  Tensor<double> adopt;
  adopt = std::move(fresh);
  CHECK(adopt.data() == p);

  // A number assigned to an empty tensor makes a 0-dim tensor.
  Tensor<float> s;
  s = 2.5;
  CHECK(s.dim() == 0);
  CHECK(s.item() == 2.5f);
}

TEST_CASE("semantics: assignment broadcasts (copy_ rule) and converts dtypes") {
  Tensor<float> y = weft::zeros<float>(Shape{3, 4});
  y = weft::from_vector<float>({1.5f, -2.5f, 3.75f, 4.0f});
  CHECK(values_of(y) == std::vector<double>{1.5, -2.5, 3.75, 4, 1.5, -2.5, 3.75, 4, 1.5, -2.5, 3.75, 4});
  y = 7;  // a number fills
  CHECK(values_of(y) == std::vector<double>(12, 7.0));

  // float -> int32 truncates toward zero (C++ and PyTorch's .to(int))
  Tensor<std::int32_t> yi = weft::zeros<std::int32_t>(Shape{4});
  yi = weft::from_vector<float>({1.9f, -1.9f, 0.5f, -0.5f});
  CHECK(values_of(yi) == std::vector<double>{1, -1, 0, 0});
  // anything -> bool tests != 0
  Tensor<bool> yb = weft::zeros<bool>(Shape{4});
  yb = weft::from_vector<float>({0.0f, -0.0f, 0.25f, -3.0f});
  CHECK(values_of(yb) == std::vector<double>{0, 0, 1, 1});
  // double -> half rounds to nearest even
  Tensor<half> yh = weft::zeros<half>(Shape{2});
  yh = weft::from_vector<double>({1.0 + 0x1p-11, 1.0 + 3 * 0x1p-11});
  CHECK(values_of(yh) == std::vector<double>{1.0, 1.0 + 0x1p-9});
}

}  // TEST_SUITE

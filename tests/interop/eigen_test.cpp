// SPDX-License-Identifier: MIT
/// @file cpu: the Eigen bridge copies nothing. as_eigen maps a view's own elements (strides kept,
/// writes in both directions, read-only for const views); from_eigen views a matrix's elements
/// with its storage order's strides, so weft kernels read and write the matrix in place.
#include <Eigen/Core>

#include <weft/interop/eigen.hpp>

#include "error_check.hpp"
#include "reference.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {

TEST_CASE("as_eigen: a row-major Map of a view's elements, strides kept, writes in both directions") {
  WEFT_TEST_RNG(rng);
  Tensor<double> t = random_contiguous<double>(rng, Shape{4, 6}, Domain{});
  const std::vector<double> want = values_of(t);
  auto m = weft::as_eigen(t);
  static_assert(std::is_same_v<decltype(m)::PlainObject, Eigen::Matrix<double, -1, -1, Eigen::RowMajor>>);
  CHECK(m.data() == t.data());
  REQUIRE(m.rows() == 4);
  REQUIRE(m.cols() == 6);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j) CHECK(m(i, j) == want[std::size_t(i * 6 + j)]);

  // A transposed, column-sliced view: the Map walks the view's strides.
  TensorView<double> tv = t.transpose(0, 1).slice(0, 1, 6, 2);  // shape [3, 4], strides [2, 6]
  auto mt = weft::as_eigen(tv);
  CHECK(mt.data() == tv.data());
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) CHECK(mt(i, j) == want[std::size_t(j * 6 + 1 + 2 * i)]);
  mt(2, 3) = -7.5;  // Eigen writes: the tensor sees it at (3, 5)
  CHECK(t.select(0, 3).to_vector()[5] == -7.5);
  t.select(0, 0) = 2.25;  // weft writes: the Map sees it
  CHECK(mt(0, 0) == 2.25);

  // 1-D: a column vector with the view's stride; const views map read-only.
  const Tensor<float> c = random_contiguous<float>(rng, Shape{9}, Domain{});
  auto v = weft::as_eigen<1>(c.slice(0, 0, 9, 4));  // elements 0, 4, 8
  static_assert(std::is_same_v<decltype(v), weft::EigenMap<const float, 1>>);
  static_assert(!std::is_assignable_v<decltype(v(0)), float>);
  REQUIRE(v.size() == 3);
  for (int i = 0; i < 3; ++i) CHECK(v(i) == c.to_vector()[std::size_t(4 * i)]);
  CHECK(double(v.sum()) == doctest::Approx(double(c.to_vector()[0]) + c.to_vector()[4] + c.to_vector()[8]));

  CHECK(has(error_of([&] { weft::as_eigen(c); }), "needs a 2-D view, got shape [9]"));
  CHECK(has(error_of([&] { weft::as_eigen<1>(t); }), "needs a 1-D view"));
}

TEST_CASE("from_eigen: views of column-major, row-major, vector and block storage, computed on in place") {
  WEFT_TEST_RNG(rng);
  Eigen::MatrixXf col(3, 5);  // column-major: strides [1, 3]
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j) col(i, j) = random_value<float>(rng, Domain{});
  TensorView<float> vc = weft::from_eigen(col);
  CHECK(vc.data() == col.data());
  CHECK(vc.shape() == Shape{3, 5});
  CHECK(vc.strides() == weft::Strides{1, 3});
  std::vector<double> col_values;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j) col_values.push_back(col(i, j));
  CHECK(values_of(vc) == col_values);

  Eigen::Matrix<float, 3, 5, Eigen::RowMajor> row;
  row.setConstant(std::numeric_limits<float>::quiet_NaN());  // poisoned: every element must be written
  TensorView<float> vr = weft::from_eigen(row);
  CHECK(vr.strides() == weft::Strides{5, 1});
  vr = 2 * vc + 1;  // one weft kernel reads col and writes row in place
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j) CHECK(row(i, j) == 2 * col(i, j) + 1);

  auto block = col.block(1, 1, 2, 3);  // strides [1, 3], starting at (1, 1)
  TensorView<float> vb = weft::from_eigen(block);
  CHECK(vb.data() == &col(1, 1));
  CHECK(vb.strides() == weft::Strides{1, 3});
  const Eigen::MatrixXf before = col;
  vb = 0;
  CHECK(col.block(1, 1, 2, 3).isZero());
  col.block(1, 1, 2, 3) = before.block(1, 1, 2, 3);
  CHECK(col == before);  // nothing outside the block was written

  const Eigen::VectorXd vec = Eigen::VectorXd::LinSpaced(4, 1.0, 4.0);
  auto vv = weft::from_eigen(vec);
  static_assert(std::is_same_v<decltype(vv), TensorView<const double>>);
  CHECK(vv.shape() == Shape{4});
  CHECK(vv.to_vector() == std::vector<double>{1, 2, 3, 4});
}

}  // TEST_SUITE

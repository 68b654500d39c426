// SPDX-License-Identifier: MIT
/// @file cpu: the errors of the contract (docs/api.md, "Errors") that exist for pointwise ops. Each throws
/// weft::Error whose message names the operation and the shapes, and writes nothing: destinations
/// are compared byte for byte with a snapshot, and empty destinations stay empty.
#include "error_check.hpp"
#include "pointwise_check.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {

TEST_CASE("errors: operands that do not broadcast (assign, fuse, eval)") {
  WEFT_TEST_RNG(rng);
  Tensor<float> a = random_contiguous<float>(rng, Shape{2, 3}, Domain{});
  Tensor<float> b = random_contiguous<float>(rng, Shape{4}, Domain{});
  Tensor<float> y = random_contiguous<float>(rng, Shape{2, 3}, Domain{});
  auto before = storage_snapshot(y);
  std::string m = error_of([&] { y = a + b; });
  INFO(m);
  CHECK(has(m, "weft::assign"));
  CHECK(has(m, "[2, 3]"));
  CHECK(has(m, "[4]"));
  CHECK(has(m, "cannot be broadcast together"));
  CHECK(storage_snapshot(y) == before);

  Tensor<float> z = random_contiguous<float>(rng, Shape{2, 3}, Domain{});
  auto before_z = storage_snapshot(z);
  std::string f = error_of([&] { weft::fuse(weft::assign(y, a * 2), weft::assign(z, weft::exp(b) + a)); });
  INFO(f);
  CHECK(has(f, "weft::fuse"));
  CHECK(has(f, "[4]"));
  CHECK(has(f, "[2, 3]"));
  CHECK(storage_snapshot(y) == before);  // the valid first statement did not run either
  CHECK(storage_snapshot(z) == before_z);

  std::string e = error_of([&] { (void)weft::eval(weft::where(a > 0, b, a)); });
  CHECK(has(e, "weft::eval"));
  CHECK(has(e, "[4]"));
}

TEST_CASE("errors: an expression that does not broadcast to the destination") {
  WEFT_TEST_RNG(rng);
  Tensor<float> x = random_contiguous<float>(rng, Shape{5, 4}, Domain{});
  TensorView<float> y = make_view<float>(rng, Shape{3, 4}, Domain{}, Layout::strided);
  auto before = storage_snapshot(y);
  std::string m = error_of([&] { y = x * 2; });
  INFO(m);
  CHECK(has(m, "weft::assign"));
  CHECK(has(m, "cannot write an expression of shape [5, 4] into a destination of shape [3, 4]"));
  CHECK(storage_snapshot(y) == before);
  // A larger rank does not shrink into a smaller view (copy_ never reduces).
  Tensor<float> row = random_contiguous<float>(rng, Shape{4}, Domain{});
  auto before_row = storage_snapshot(row);
  std::string r = error_of([&] { row.view() = x; });
  CHECK(has(r, "[5, 4]"));
  CHECK(has(r, "[4]"));
  CHECK(storage_snapshot(row) == before_row);
  // Compound assignment checks the same way.
  std::string c = error_of([&] { y += x; });
  CHECK(has(c, "weft::assign"));
  CHECK(storage_snapshot(y) == before);
}

}  // TEST_SUITE

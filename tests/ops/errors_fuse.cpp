// SPDX-License-Identifier: MIT
/// @file cpu: errors of an empty operand, += into an empty tensor, and fused outputs of different shapes or overlapping each other; nothing is written.
#include "error_check.hpp"
#include "pointwise_check.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {

TEST_CASE("errors: an empty operand, and += into an empty tensor") {
  WEFT_TEST_RNG(rng);
  Tensor<float> a = random_contiguous<float>(rng, Shape{3}, Domain{});
  Tensor<float> empty;
  Tensor<float> y = random_contiguous<float>(rng, Shape{3}, Domain{});
  auto before = storage_snapshot(y);
  std::string m = error_of([&] { y = a + empty; });
  CHECK(has(m, "weft::assign: an operand is an empty (default-constructed) tensor"));
  CHECK(storage_snapshot(y) == before);
  Tensor<float> out;
  std::string f = error_of([&] { weft::fuse(weft::assign(out, a * 2), weft::assign(y, weft::exp(empty))); });
  CHECK(has(f, "weft::fuse"));
  CHECK(!out.defined());  // nothing allocated either
  CHECK(storage_snapshot(y) == before);

  Tensor<float> e2;
  std::string c = error_of([&] { e2 += a; });
  CHECK(has(c, "weft::assign: compound assignment (+=, -=, *=, /=) into an empty tensor"));
  CHECK(!e2.defined());
  CHECK(has(error_of([&] { e2 -= 1; }), "empty tensor"));
  CHECK(has(error_of([&] { e2 *= a; }), "empty tensor"));
  CHECK(has(error_of([&] { e2 /= a; }), "empty tensor"));
  CHECK(!e2.defined());
}

TEST_CASE("errors: a fused output its right-hand side does not broadcast to, or outputs overlapping each other") {
  WEFT_TEST_RNG(rng);
  Tensor<float> a = random_contiguous<float>(rng, Shape{3, 4}, Domain{});
  Tensor<float> y0 = random_contiguous<float>(rng, Shape{3, 4}, Domain{});
  Tensor<float> y1 = random_contiguous<float>(rng, Shape{4}, Domain{});
  Tensor<float> y2;
  auto s0 = storage_snapshot(y0), s1 = storage_snapshot(y1);
  // Outputs of different shapes fuse (one multi-shape kernel); a [3, 4] expression into a [4] view does not.
  std::string m = error_of([&] { weft::fuse(weft::assign(y0, a), weft::assign(y2, a * 2), weft::assign(y1.view(), a)); });
  INFO(m);
  CHECK(has(m, "weft::fuse: cannot write an expression of shape [3, 4] into a destination of shape [4]"));
  CHECK(storage_snapshot(y0) == s0);
  CHECK(storage_snapshot(y1) == s1);
  CHECK(!y2.defined());

  // Two outputs that share memory: a whole tensor and one of its rows (broadcast shape would
  // match if the row were expanded; it is rejected as overlapping), or the same tensor twice.
  Tensor<float> base = random_contiguous<float>(rng, Shape{4, 4}, Domain{});
  TensorView<float> t = base.transpose(0, 1);
  auto sb = storage_snapshot(base);
  std::string o = error_of([&] { weft::fuse(weft::assign(base.view(), a.select(0, 0) * 0 + 1), weft::assign(t, base + 1)); });
  INFO(o);
  CHECK(has(o, "weft::fuse: outputs 0 and 1 overlap in memory"));
  CHECK(storage_snapshot(base) == sb);
  TensorView<float> half_a = base.narrow(0, 0, 2), half_b = base.narrow(0, 1, 2);  // rows 0-1 and 1-2 overlap
  std::string p = error_of([&] { weft::fuse(weft::assign(half_a, half_b * 2), weft::assign(half_b, half_a)); });
  CHECK(has(p, "overlap"));
  CHECK(storage_snapshot(base) == sb);
  std::string q = error_of([&] { weft::fuse(weft::assign(y0, a), weft::assign(y0, a + 1)); });
  CHECK(has(q, "overlap"));
  CHECK(storage_snapshot(y0) == s0);
  // Disjoint rows of one tensor are fine.
  TensorView<float> r0 = base.narrow(0, 0, 2), r1 = base.narrow(0, 2, 2);
  weft::fuse(weft::assign(r0, r1), weft::assign(r1, r0));
  std::vector<double> v = values_of(base), old;
  for (std::size_t i = 0; i < 16; ++i) {
    float f;
    std::memcpy(&f, sb.data() + i * 4, 4);
    old.push_back(f);
  }
  for (std::size_t i = 0; i < 8; ++i) {
    CHECK(v[i] == old[i + 8]);
    CHECK(v[i + 8] == old[i]);
  }
}

}  // TEST_SUITE

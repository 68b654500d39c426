// SPDX-License-Identifier: MIT
/// @file cpu: the errors of DESIGN.md's Errors section that exist for pointwise ops. Each throws
/// weft::Error whose message names the operation and the shapes, and writes nothing: destinations
/// are compared byte for byte with a snapshot, and empty destinations stay empty.
#include "pointwise_check.hpp"

using namespace weft_test;

namespace {

/// Runs f, which must throw weft::Error; returns its message ("" and a failed check otherwise).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const weft::Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL_CHECK("threw something other than weft::Error: ", e.what());
    return "";
  }
  FAIL_CHECK("did not throw");
  return "";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

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
  Tensor<float> y = make_view<float>(rng, Shape{3, 4}, Domain{}, Layout::strided);
  auto before = storage_snapshot(y);
  std::string m = error_of([&] { y = x * 2; });
  INFO(m);
  CHECK(has(m, "weft::assign"));
  CHECK(has(m, "cannot write an expression of shape [5, 4] into a destination of shape [3, 4]"));
  CHECK(storage_snapshot(y) == before);
  // A larger rank does not shrink into a smaller destination (copy_ never reduces).
  Tensor<float> row = random_contiguous<float>(rng, Shape{4}, Domain{});
  auto before_row = storage_snapshot(row);
  std::string r = error_of([&] { row = x; });
  CHECK(has(r, "[5, 4]"));
  CHECK(has(r, "[4]"));
  CHECK(storage_snapshot(row) == before_row);
  // Compound assignment checks the same way.
  std::string c = error_of([&] { y += x; });
  CHECK(has(c, "weft::assign"));
  CHECK(storage_snapshot(y) == before);
}

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

TEST_CASE("errors: fused outputs of different shapes, or overlapping each other") {
  WEFT_TEST_RNG(rng);
  Tensor<float> a = random_contiguous<float>(rng, Shape{3, 4}, Domain{});
  Tensor<float> y0 = random_contiguous<float>(rng, Shape{3, 4}, Domain{});
  Tensor<float> y1 = random_contiguous<float>(rng, Shape{4}, Domain{});
  Tensor<float> y2;
  auto s0 = storage_snapshot(y0), s1 = storage_snapshot(y1);
  std::string m = error_of([&] { weft::fuse(weft::assign(y0, a), weft::assign(y2, a * 2), weft::assign(y1, a.select(0, 0))); });
  INFO(m);
  CHECK(has(m, "weft::fuse: outputs of one kernel must have one shape, got [3, 4] and [4]"));
  CHECK(storage_snapshot(y0) == s0);
  CHECK(storage_snapshot(y1) == s1);
  CHECK(!y2.defined());

  // Two outputs that share memory: a whole tensor and one of its rows (broadcast shape would
  // match if the row were expanded; it is rejected as overlapping), or the same tensor twice.
  Tensor<float> base = random_contiguous<float>(rng, Shape{4, 4}, Domain{});
  Tensor<float> t = base.transpose(0, 1);
  auto sb = storage_snapshot(base);
  std::string o = error_of([&] { weft::fuse(weft::assign(base, a.select(0, 0) * 0 + 1), weft::assign(t, base + 1)); });
  INFO(o);
  CHECK(has(o, "weft::fuse: outputs 0 and 1 overlap in memory"));
  CHECK(storage_snapshot(base) == sb);
  Tensor<float> half_a = base.narrow(0, 0, 2), half_b = base.narrow(0, 1, 2);  // rows 0-1 and 1-2 overlap
  std::string p = error_of([&] { weft::fuse(weft::assign(half_a, half_b * 2), weft::assign(half_b, half_a)); });
  CHECK(has(p, "overlap"));
  CHECK(storage_snapshot(base) == sb);
  std::string q = error_of([&] { weft::fuse(weft::assign(y0, a), weft::assign(y0, a + 1)); });
  CHECK(has(q, "overlap"));
  CHECK(storage_snapshot(y0) == s0);
  // Disjoint rows of one tensor are fine.
  Tensor<float> r0 = base.narrow(0, 0, 2), r1 = base.narrow(0, 2, 2);
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

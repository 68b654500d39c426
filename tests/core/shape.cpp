// SPDX-License-Identifier: MIT
/// @file core: Shape (construction, numel, insert/erase, limits), contiguous strides and numpy
/// broadcasting rules, checked against the independent broadcast in tests/support/reference.hpp.
#include "reference.hpp"

using namespace weft_test;

TEST_SUITE("core") {

TEST_CASE("shape: construction, rank, numel, printing") {
  Shape a{2, 3, 4};
  CHECK(a.rank() == 3);
  CHECK(a.numel() == 24);
  CHECK(a == Shape(std::vector<std::int64_t>{2, 3, 4}));
  std::vector<int> ints{2, 3, 4};
  CHECK(a == Shape(ints.begin(), ints.end()));
  CHECK(Shape{}.rank() == 0);
  CHECK(Shape{}.numel() == 1);  // rank 0: one element
  CHECK(Shape{3, 0, 5}.numel() == 0);
  CHECK(shape_str(a) == "[2, 3, 4]");
  CHECK(a.str() == "[2, 3, 4]");
  CHECK(shape_str(Shape{}) == "[]");
  CHECK(!(a == Shape{2, 3}));
  CHECK(!(a == Shape{2, 3, 5}));
  Shape b = a;
  b.insert(1, 7);
  CHECK(b == Shape{2, 7, 3, 4});
  b.insert(4, 9);
  CHECK(b == Shape{2, 7, 3, 4, 9});
  b.erase(0);
  CHECK(b == Shape{7, 3, 4, 9});
  CHECK(b.to_vector() == std::vector<std::int64_t>{7, 3, 4, 9});
  Shape full = Shape::filled(weft::kMaxRank, 1);
  CHECK(full.rank() == weft::kMaxRank);
  CHECK_THROWS_AS(full.push_back(1), weft::Error);
  CHECK_THROWS_WITH_AS(Shape(std::vector<std::int64_t>(weft::kMaxRank + 1, 1)), doctest::Contains("rank above the maximum"),
                       weft::Error);
}

TEST_CASE("shape: contiguous strides are row-major, size-0 dims count as 1") {
  CHECK(weft::contiguous_strides(Shape{2, 3, 4}) == Shape{12, 4, 1});
  CHECK(weft::contiguous_strides(Shape{5}) == Shape{1});
  CHECK(weft::contiguous_strides(Shape{}) == Shape{});
  CHECK(weft::contiguous_strides(Shape{2, 0, 3}) == Shape{3, 3, 1});
  WEFT_TEST_RNG(rng);
  for (int trial = 0; trial < 200; ++trial) {
    Shape s = random_shape(rng);
    Shape st = weft::contiguous_strides(s);
    REQUIRE(st.rank() == s.rank());
    std::int64_t expect = 1;
    for (int d = s.rank() - 1; d >= 0; --d) {
      CHECK(st[d] == expect);
      expect *= std::max<std::int64_t>(s[d], 1);
    }
  }
}

TEST_CASE("shape: broadcast_into and broadcasts_to follow numpy / PyTorch rules") {
  auto bc = [](Shape a, const Shape& b) {
    bool ok = weft::broadcast_into(a, b);
    return ok ? shape_str(a) : std::string("error");
  };
  CHECK(bc(Shape{3, 1}, Shape{1, 4}) == "[3, 4]");
  CHECK(bc(Shape{}, Shape{2, 3}) == "[2, 3]");
  CHECK(bc(Shape{5, 1, 3}, Shape{4, 1}) == "[5, 4, 3]");
  CHECK(bc(Shape{2, 3}, Shape{3, 2}) == "error");
  CHECK(bc(Shape{0}, Shape{1}) == "[0]");
  CHECK(bc(Shape{0}, Shape{2}) == "error");
  CHECK(bc(Shape{1, 0}, Shape{5, 1}) == "[5, 0]");

  CHECK(weft::broadcasts_to(Shape{3}, Shape{2, 3}));
  CHECK(weft::broadcasts_to(Shape{1, 3}, Shape{2, 3}));
  CHECK(weft::broadcasts_to(Shape{}, Shape{2, 3}));
  CHECK(!weft::broadcasts_to(Shape{2, 3}, Shape{3}));  // copy_ never shrinks
  CHECK(!weft::broadcasts_to(Shape{2, 1}, Shape{1, 1}));
  CHECK(!weft::broadcasts_to(Shape{4}, Shape{2, 3}));

  WEFT_TEST_RNG(rng);
  int compatible = 0, incompatible = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    Shape full = random_shape(rng, 0, 6, 5000);
    Shape a = broadcastable_to(rng, full), b = broadcastable_to(rng, full);
    if (rng.chance(0.3) && b.rank() > 0) {  // perturb one extent: usually incompatible
      std::vector<std::int64_t> d = dims_of(b);
      d[std::size_t(rng.integer(0, b.rank() - 1))] += rng.integer(1, 3);
      b = Shape(d);
    }
    Shape want;
    bool ok_want = broadcast_shapes({a, b}, want);
    Shape got = a;
    bool ok_got = weft::broadcast_into(got, b);
    INFO(shape_str(a), " with ", shape_str(b));
    REQUIRE(ok_got == ok_want);
    if (ok_want) {
      CHECK(got == want);
      CHECK(weft::broadcasts_to(a, want));
      CHECK(weft::broadcasts_to(b, want));
      ++compatible;
    } else {
      ++incompatible;
    }
  }
  CHECK(compatible > 100);
  CHECK(incompatible > 100);
}

TEST_CASE("shape: broadcast_strides put 0 on broadcast dims and keep the others") {
  CHECK(weft::broadcast_strides(Shape{3}, Shape{1}, Shape{2, 3}) == Shape{0, 1});
  CHECK(weft::broadcast_strides(Shape{2, 1}, Shape{7, 5}, Shape{4, 2, 6}) == Shape{0, 7, 0});
  CHECK(weft::broadcast_strides(Shape{}, Shape{}, Shape{2, 2}) == Shape{0, 0});
}

TEST_CASE("shape: wrap_dim accepts -rank..rank-1 and names the op otherwise") {
  CHECK(weft::wrap_dim("op", -1, 3) == 2);
  CHECK(weft::wrap_dim("op", 0, 3) == 0);
  CHECK(weft::wrap_dim("op", -3, 3) == 0);
  CHECK(weft::wrap_dim("op", 0, 0) == 0);  // rank 0 accepts dims 0 and -1, like PyTorch
  CHECK(weft::wrap_dim("op", -1, 0) == 0);
  CHECK_THROWS_WITH_AS(weft::wrap_dim("transpose", 3, 3), "weft::transpose: dim 3 is out of range for a tensor of rank 3",
                       weft::Error);
  CHECK_THROWS_AS(weft::wrap_dim("op", -4, 3), weft::Error);
}

}  // TEST_SUITE

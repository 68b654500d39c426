// SPDX-License-Identifier: MIT
/// @file core: the iteration planner (plan_iteration). Dims are merged only where every operand
/// allows it, and the collapsed space visits exactly the same (offset per operand) sequence as the
/// original shape, for random shapes and random operand layouts.
#include "reference.hpp"

using namespace weft_test;
using weft::detail::IterationSpace;
using weft::detail::plan_iteration;

namespace {

/// Operand strides as run_statements builds them: each tensor broadcast to `shape`.
template <class... Ts>
std::vector<weft::Strides> strides_of(const Shape& shape, const weft::TensorBase<Ts>&... ts) {
  return {weft::broadcast_strides(ts.shape(), ts.strides(), shape)...};
}

/// Offsets per operand at every element, walking the original shape in row-major order.
std::vector<std::vector<std::int64_t>> walk_original(const Shape& shape, const std::vector<weft::Strides>& ops) {
  std::vector<std::vector<std::int64_t>> out(ops.size());
  for_each_index(shape, [&](const std::vector<std::int64_t>& idx) {
    for (std::size_t k = 0; k < ops.size(); ++k) {
      std::int64_t off = 0;
      for (int d = 0; d < shape.rank(); ++d) off += idx[std::size_t(d)] * ops[k][d];
      out[k].push_back(off);
    }
  });
  return out;
}

/// The same through the collapsed space: row coordinates from row_coordinates(), then the inner dim.
std::vector<std::vector<std::int64_t>> walk_collapsed(const IterationSpace& space, const std::vector<weft::Strides>& ops) {
  std::vector<std::vector<std::int64_t>> out(ops.size());
  if (space.numel == 0) return out;
  std::vector<weft::Strides> c;
  for (const auto& s : ops) c.push_back(space.collapse(s));
  const std::int64_t inner = space.inner(), rows = space.numel / inner;
  const int r = space.rank();
  for (std::int64_t row = 0; row < rows; ++row) {
    std::int64_t outer[weft::kMaxRank] = {};
    weft::detail::row_coordinates(space, row, outer);
    for (std::int64_t j = 0; j < inner; ++j)
      for (std::size_t k = 0; k < ops.size(); ++k) {
        std::int64_t off = j * c[k][r - 1];
        for (int d = 0; d < r - 1; ++d) off += outer[d] * c[k][d];
        out[k].push_back(off);
      }
  }
  return out;
}

}  // namespace

TEST_SUITE("core") {

TEST_CASE("plan: contiguous operands collapse to one linear dim") {
  Shape s{4, 5, 6};
  auto a = weft::zeros<float>(s), b = weft::zeros<float>(s), y = weft::zeros<float>(s);
  IterationSpace space = plan_iteration(s, strides_of(s, y, a, b));
  CHECK(space.rank() == 1);
  CHECK(space.shape == Shape{120});
  CHECK(space.linear);
  CHECK(space.numel == 120);
  // Size-1 dims do not get in the way.
  Shape s1{1, 4, 1, 5, 1};
  auto c = weft::zeros<float>(s1);
  IterationSpace space1 = plan_iteration(s1, strides_of(s1, c, c));
  CHECK(space1.rank() == 1);
  CHECK(space1.linear);
  CHECK(space1.shape == Shape{20});
}

TEST_CASE("plan: a broadcast row or column gives rank 2") {
  Shape s{7, 9};
  auto y = weft::zeros<float>(s), x = weft::zeros<float>(s);
  auto row = weft::zeros<float>(Shape{9}), col = weft::zeros<float>(Shape{7, 1});
  IterationSpace by_row = plan_iteration(s, strides_of(s, y, x, row));
  CHECK(by_row.rank() == 2);
  CHECK(by_row.shape == Shape{7, 9});
  CHECK(!by_row.linear);
  CHECK(by_row.collapse(weft::broadcast_strides(row.shape(), row.strides(), s)) == Shape{0, 1});
  IterationSpace by_col = plan_iteration(s, strides_of(s, y, col));
  CHECK(by_col.rank() == 2);
  CHECK(!by_col.linear);
  // A leading broadcast over a contiguous block still merges the block: [3, 4, 5] + [4, 5] -> [3, 20].
  Shape s3{3, 4, 5};
  auto y3 = weft::zeros<float>(s3), block = weft::zeros<float>(Shape{4, 5});
  IterationSpace lead = plan_iteration(s3, strides_of(s3, y3, block));
  CHECK(lead.shape == Shape{3, 20});
  // A broadcast scalar over a contiguous tensor: one dim, but stride 0 is not linear.
  auto scalar = weft::zeros<float>(Shape{});
  IterationSpace sc = plan_iteration(s3, strides_of(s3, y3, scalar));
  CHECK(sc.rank() == 1);
  CHECK(!sc.linear);
}

TEST_CASE("plan: transposed and strided operands are not linear") {
  Shape s{6, 6};
  auto y = weft::zeros<float>(s), base = weft::zeros<float>(s);
  IterationSpace t = plan_iteration(s, strides_of(s, y, base.transpose(0, 1)));
  CHECK(!t.linear);
  CHECK(t.rank() == 2);
  // A step-2 slice of the last dim merges (one stride walks both dims) but is not unit-stride.
  auto wide = weft::zeros<float>(Shape{4, 10});
  auto every_other = wide.slice(1, 0, 10, 2);  // [4, 5] strides [10, 2]
  Shape s2{4, 5};
  IterationSpace st = plan_iteration(s2, strides_of(s2, every_other));
  CHECK(st.rank() == 1);
  CHECK(!st.linear);
  // A narrowed middle dim merges with the inner dim only.
  auto big = weft::zeros<float>(Shape{2, 6, 4});
  auto narrowed = big.narrow(1, 1, 3);  // [2, 3, 4] strides [24, 4, 1]
  Shape s3{2, 3, 4};
  IterationSpace nr = plan_iteration(s3, strides_of(s3, narrowed, weft::zeros<float>(s3)));
  CHECK(nr.shape == Shape{2, 12});
  // Rank 0 and empty shapes.
  IterationSpace r0 = plan_iteration(Shape{}, std::vector<weft::Strides>{Shape{}});
  CHECK(r0.numel == 1);
  CHECK(r0.shape.numel() == 1);
  IterationSpace e = plan_iteration(Shape{3, 0, 2}, std::vector<weft::Strides>{Shape{0, 2, 1}});
  CHECK(e.numel == 0);
}

TEST_CASE("plan: random layouts visit the same offsets as the original shape, maximally merged") {
  WEFT_TEST_RNG(rng);
  int linear_seen = 0, merged_seen = 0;
  for (int trial = 0; trial < 400; ++trial) {
    Shape s = random_shape(rng, 0, 6, 3000);
    INFO("shape ", shape_str(s), " trial ", trial);
    std::vector<weft::Strides> ops;
    int n_ops = int(rng.integer(1, 4));
    bool all_contiguous_full = true;
    for (int k = 0; k < n_ops; ++k) {
      bool dst = k == 0;
      Shape sub = dst ? s : (rng.chance(0.5) ? s : broadcastable_to(rng, s));
      Layout layout = rng.chance(0.3) ? Layout::contiguous : random_layout(rng, dst);
      TensorView<float> t = make_view<float>(rng, sub, Domain{}, layout);
      all_contiguous_full = all_contiguous_full && sub == s && t.is_contiguous();
      ops.push_back(weft::broadcast_strides(t.shape(), t.strides(), s));
    }
    IterationSpace space = plan_iteration(s, ops);
    CHECK(space.numel == s.numel());
    CHECK(space.full == s);
    REQUIRE(space.rank() >= 1);
    if (s.numel() > 0) CHECK(space.shape.numel() == s.numel());
    int non_one = 0;
    for (auto e : s) non_one += e != 1;
    CHECK(space.rank() <= std::max(non_one, 1));
    CHECK(walk_collapsed(space, ops) == walk_original(s, ops));
    if (space.linear) {
      CHECK(space.rank() == 1);
      for (const auto& o : ops) CHECK(space.collapse(o)[0] == 1);
      ++linear_seen;
    }
    if (all_contiguous_full && s.numel() > 1) CHECK(space.linear);
    // Maximal: no two neighbouring collapsed dims could have been merged for every operand.
    for (int d = 0; s.numel() > 0 && d + 1 < space.rank(); ++d) {
      bool mergeable = true;
      for (const auto& o : ops) {
        auto c = space.collapse(o);
        mergeable = mergeable && c[d] == c[d + 1] * space.shape[d + 1];
      }
      CHECK_FALSE(mergeable);
    }
    merged_seen += space.rank() < non_one;
  }
  CHECK(linear_seen > 20);
  CHECK(merged_seen > 20);
}

}  // TEST_SUITE

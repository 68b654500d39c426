// SPDX-License-Identifier: MIT
/// @file cpu: topk against a full sort in plain loops (exact values and indices) on every dtype: random shapes,
/// layouts, dims, k, largest and sorted; ties and NaN; expressions; empty and rank-0 tensors; every error.
#include <algorithm>

#include <weft/ops/topk.hpp>

#include "dense_reference.hpp"
#include "reference.hpp"

using namespace weft_test;

namespace {

static_assert(std::is_same_v<decltype(weft::topk(std::declval<Tensor<half>>(), 1).values), Tensor<half>>);
static_assert(std::is_same_v<decltype(weft::topk(std::declval<Tensor<bool>>(), 1).indices), Tensor<std::int64_t>>);

struct Pair {
  double value;
  std::int64_t index;
};

/// torch.topk's order: largest first with NaN above every number, or smallest first with NaN
/// last; equal values (NaNs too) by the lower index.
bool ranks_before(const Pair& a, const Pair& b, bool largest) {
  const bool an = std::isnan(a.value), bn = std::isnan(b.value);
  if (an != bn) return an == largest;
  if (!an && a.value != b.value) return largest ? a.value > b.value : a.value < b.value;
  return a.index < b.index;
}

template <class T>
void check_topk(const weft::TopK<T>& got, const std::vector<double>& values, const Shape& full, int d, std::int64_t k,
                bool largest, bool sorted) {
  INFO("topk k ", k, " over dim ", d, " of ", shape_str(full), ", largest ", largest, ", sorted ", sorted);
  Shape want = full;
  if (full.rank() > 0) want[d] = k;
  REQUIRE(got.values.shape() == want);
  REQUIRE(got.indices.shape() == want);
  const AlongDim a(full, d), out(want, d);
  const std::vector<double> gv = values_of(got.values), gi = values_of(got.indices);
  const std::int64_t kept = full.rank() > 0 ? k : 1;
  std::int64_t wrong = 0;
  for (std::int64_t o = 0; o < a.outer; ++o)
    for (std::int64_t c = 0; c < a.inner; ++c) {
      std::vector<Pair> row, mine;
      for (std::int64_t i = 0; i < a.n; ++i) row.push_back({values[a.at(o, i, c)], i});
      std::sort(row.begin(), row.end(), [&](const Pair& x, const Pair& y) { return ranks_before(x, y, largest); });
      for (std::int64_t j = 0; j < kept; ++j)
        mine.push_back({gv[out.at(o, j, c)], std::int64_t(gi[out.at(o, j, c)])});
      if (!sorted)  // any order, but the same set
        std::sort(mine.begin(), mine.end(), [&](const Pair& x, const Pair& y) { return ranks_before(x, y, largest); });
      for (std::int64_t j = 0; j < kept; ++j) {
        const Pair& w = row[std::size_t(j)];
        const Pair& g = mine[std::size_t(j)];
        const bool same_value = std::isnan(w.value) ? std::isnan(g.value) : g.value == w.value;
        if (g.index != w.index || !same_value) {
          if (++wrong <= 3) MESSAGE("row (", o, ", ", c, ") rank ", j, ": got ", g.value, " at ", g.index, ", want ",
                                    w.value, " at ", w.index);
        }
      }
    }
  CHECK(wrong == 0);
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE_TEMPLATE("topk: random shapes, layouts, dims, k, ties and NaN on every dtype", T, float, double, half,
                   bfloat16, std::int32_t, std::int64_t, bool) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 40; ++iter) {
    const Shape full = random_shape(rng, 0, 4, 3000);
    const Layout layout = random_layout(rng, false);
    // Few distinct values: ties inside and at the edge of the chosen k.
    const TensorView<T> x = make_view<T>(rng, full, tie_domain<T>(rng.chance(0.3) ? 0.05 : 0.0), layout);
    const std::vector<double> values = values_of(x);
    const auto [dim, d] = rng.chance(0.3) ? RandomDim{-1, std::max(full.rank(), 1) - 1} : random_dim(rng, full.rank());
    const std::int64_t n = full.rank() > 0 ? full[d] : 1;
    const std::int64_t k = rng.chance(0.2) ? n : rng.integer(0, n);
    const bool largest = rng.chance(0.5), sorted = rng.chance(0.7);
    INFO("dtype ", type_name<T>(), ", iteration ", iter, ", layout ", layout_name(layout));
    check_topk(weft::topk(x, k, dim, largest, sorted), values, full, d, k, largest, sorted);
  }
}

TEST_CASE("topk: NaN ranks as the largest value; ties choose and order the lower index first") {
  const Tensor<float> x = weft::from_vector<float>({3, NAN, 1, 3, NAN, -INFINITY, 1, INFINITY});
  weft::TopK<float> t = weft::topk(x, 4);
  CHECK(values_of(t.indices) == std::vector<double>{1, 4, 7, 0});
  t = weft::topk(x, 3, 0, false);
  CHECK(values_of(t.indices) == std::vector<double>{5, 2, 6});
  t = weft::topk(x, 8, 0, false);  // every element: NaN last
  CHECK(values_of(t.indices) == std::vector<double>{5, 2, 6, 0, 3, 7, 1, 4});
  const std::vector<double> v = values_of(t.values);
  CHECK(std::isnan(v[6]));
  CHECK(v[0] == -INFINITY);
  // Equal values at the edge of k: the lower indices are chosen, sorted or not.
  const Tensor<std::int32_t> ties = weft::from_vector<std::int32_t>({5, 7, 5, 7, 5, 5}, Shape{1, 6});
  CHECK(values_of(weft::topk(ties, 3).indices) == std::vector<double>{1, 3, 0});
  std::vector<double> unsorted = values_of(weft::topk(ties, 3, 1, true, false).indices);
  std::sort(unsorted.begin(), unsorted.end());
  CHECK(unsorted == std::vector<double>{0, 1, 3});
  CHECK(values_of(weft::topk(ties, 2, 1, false).indices) == std::vector<double>{0, 2});
}

TEST_CASE("topk: long rows and rows along an inner dim") {
  WEFT_TEST_RNG(rng);
  for (const Shape& s : {Shape{3, 10000}, Shape{100, 50, 3}}) {
    Domain dom;
    dom.grid = 0.01;
    const TensorView<float> x = make_view<float>(rng, s, dom, Layout::permuted);
    const std::vector<double> values = values_of(x);
    for (int d = 0; d < s.rank(); ++d)
      for (std::int64_t k : {std::int64_t(1), std::min<std::int64_t>(17, s[d]), s[d]}) {
        check_topk(weft::topk(x, k, d), values, s, d, k, true, true);
        check_topk(weft::topk(x, k, d, false, false), values, s, d, k, false, false);
      }
  }
}

TEST_CASE("topk: an expression input is evaluated first") {
  WEFT_TEST_RNG(rng);
  const Tensor<double> a = random_contiguous<double>(rng, Shape{9, 31}, Domain{});
  const std::vector<double> values = values_of(weft::eval(weft::abs(a) - 2.0));
  check_topk(weft::topk(weft::abs(a) - 2.0, 5), values, Shape{9, 31}, 1, 5, true, true);
  check_topk(weft::topk(weft::abs(a) - 2.0, 4, 0, false), values, Shape{9, 31}, 0, 4, false, true);
}

TEST_CASE("topk: empty tensors, k = 0 and rank-0 tensors") {
  const Tensor<float> e = weft::zeros<float>(Shape{0, 5});
  CHECK(weft::topk(e, 2).values.shape() == Shape{0, 2});
  CHECK(weft::topk(e, 0, 0).indices.shape() == Shape{0, 5});
  const Tensor<float> x = weft::ones<float>(Shape{3, 4});
  CHECK(weft::topk(x, 0).values.shape() == Shape{3, 0});
  const Tensor<float> scalar = weft::full<float>(Shape{}, 2.5f);
  for (std::int64_t k : {0, 1}) {  // a 0-dim input gives its element and index 0 (PyTorch)
    const weft::TopK<float> t = weft::topk(scalar, k, 0);
    CHECK(t.values.dim() == 0);
    CHECK(t.values.item() == 2.5f);
    CHECK(t.indices.item() == 0);
  }
}

TEST_CASE("topk: errors name the op, the shape, k and the fix, and allocate nothing") {
  const Tensor<float> x = weft::zeros<float>(Shape{2, 3});
  std::string m = error_before_allocation([&] { weft::topk(x, 4); });
  CHECK(has(m, "weft::topk"));
  CHECK(has(m, "k = 4 is out of range for dim 1 of size 3"));
  CHECK(has(m, "[2, 3]"));
  CHECK(has(m, "[0, 3]"));
  CHECK(has(error_before_allocation([&] { weft::topk(x, -1, 0); }), "k = -1 is out of range for dim 0 of size 2"));
  CHECK(has(error_before_allocation([&] { weft::topk(x, 1, 2); }), "dim 2 is out of range for an input of shape [2, 3]"));
  const Tensor<float> empty = weft::zeros<float>(Shape{4, 0}), scalar = weft::full<float>(Shape{}, 1.0f);
  CHECK(has(error_before_allocation([&] { weft::topk(empty, 1); }), "of size 0"));
  CHECK(has(error_before_allocation([&] { weft::topk(scalar, 2); }), "[0, 1]"));
  CHECK(has(error_before_allocation([&] { weft::topk(Tensor<float>(), 1); }), "empty (default-constructed)"));

  const weft::TensorView<float> gpu = fake_cuda_view<float>(Shape{2, 3});
  m = error_before_allocation([&] { weft::topk(gpu, 1); });
  CHECK(has(m, "weft::topk"));
  CHECK(has(m, "nvcc"));
}

}  // TEST_SUITE

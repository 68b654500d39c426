// SPDX-License-Identifier: MIT
/// @file cpu: destinations that are also inputs. Reading exactly the element being written is done
/// in place (y = y * 2, x = x + y); any other overlap reads a copy of the ORIGINAL values
/// (y = transpose(y), a broadcast row of y, shifted views). Values are integers in float so that
/// every result is exact and any read of an already-written element shows.
#include <algorithm>
#include <iterator>

#include "pointwise_check.hpp"

using namespace weft_test;

namespace {

/// A float tensor holding distinct small integers (exact in every operation below).
TensorView<float> integers(Rng& rng, const Shape& s, Layout layout = Layout::contiguous) {
  TensorView<float> t = make_destination<float>(rng, s, layout);
  std::vector<double> v(std::size_t(s.numel()));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = double(i % 1000) - 500 + double(rng.integer(0, 3)) * 1000;
  write_values(t, v);
  return t;
}

std::vector<Expect> exactly(const std::vector<double>& v) {
  std::vector<Expect> out;
  for (double x : v) out.push_back({x, 0});
  return out;
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("aliasing: y = y * 2 and x = x + y read in place, any layout") {
  WEFT_TEST_RNG(rng);
  for (int trial = 0; trial < 12; ++trial) {
    Shape s = random_shape(rng, 1, 4, trial % 4 == 3 ? 50000 : 2000);
    TensorView<float> y = integers(rng, s, random_layout(rng, true));
    std::vector<double> old = values_of(y);
    y = y * 2;
    std::vector<double> want = old;
    for (double& v : want) v *= 2;
    WEFT_CHECK_REPORT(check_output(y, exactly(want)));
    TensorView<float> x = integers(rng, s, random_layout(rng, true));
    std::vector<double> xv = values_of(x), yv = values_of(y);
    x = x + y;
    for (std::size_t i = 0; i < xv.size(); ++i) xv[i] += yv[i];
    WEFT_CHECK_REPORT(check_output(x, exactly(xv)));
    x += x;  // compound assignment reading its own destination
    for (double& v : xv) v *= 2;
    WEFT_CHECK_REPORT(check_output(x, exactly(xv)));
  }
}

TEST_CASE("aliasing: y = transpose(y) gives the transposed ORIGINAL values") {
  WEFT_TEST_RNG(rng);
  for (std::int64_t n : {2, 3, 16, 17, 45, 200}) {
    INFO("n = ", n);
    TensorView<float> y = integers(rng, Shape{n, n});
    std::vector<double> old = values_of(y);
    y = y.transpose(0, 1);
    std::vector<double> want(old.size());
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) want[std::size_t(i * n + j)] = old[std::size_t(j * n + i)];
    WEFT_CHECK_REPORT(check_output(y, exactly(want)));
    // Mixed: one operand read in place, one transposed (copied).
    old = values_of(y);
    y = y.transpose(0, 1) * 3 + y;
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        want[std::size_t(i * n + j)] = old[std::size_t(j * n + i)] * 3 + old[std::size_t(i * n + j)];
    WEFT_CHECK_REPORT(check_output(y, exactly(want)));
    // Compound assignment with a transposed view of itself.
    old = values_of(y);
    y += y.transpose(0, 1);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        want[std::size_t(i * n + j)] = old[std::size_t(i * n + j)] + old[std::size_t(j * n + i)];
    WEFT_CHECK_REPORT(check_output(y, exactly(want)));
  }
}

TEST_CASE("aliasing: y = y.select(0, 0) broadcasts the original first row") {
  WEFT_TEST_RNG(rng);
  for (std::int64_t rows : {2, 5, 40}) {
    for (std::int64_t cols : {1, 16, 33, 1000}) {
      INFO(rows, " x ", cols);
      TensorView<float> y = integers(rng, Shape{rows, cols});
      std::vector<double> old = values_of(y);
      y = y.select(0, 0);
      std::vector<double> want(old.size());
      for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j) want[std::size_t(i * cols + j)] = old[std::size_t(j)];
      WEFT_CHECK_REPORT(check_output(y, exactly(want)));
      // The last row broadcast back over everything (read after the first rows are written).
      TensorView<float> z = integers(rng, Shape{rows, cols});
      old = values_of(z);
      z = z.select(0, rows - 1) + z;
      for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j)
          want[std::size_t(i * cols + j)] = old[std::size_t((rows - 1) * cols + j)] + old[std::size_t(i * cols + j)];
      WEFT_CHECK_REPORT(check_output(z, exactly(want)));
    }
  }
}

TEST_CASE("aliasing: shifted views of one tensor read the original values") {
  WEFT_TEST_RNG(rng);
  for (std::int64_t n : {2, 17, 100, 40000}) {
    INFO("n = ", n);
    TensorView<float> x = integers(rng, Shape{n});
    std::vector<double> old = values_of(x);
    x.narrow(0, 1, n - 1) = x.narrow(0, 0, n - 1);  // shift right by one
    std::vector<double> want = old;
    for (std::int64_t i = 1; i < n; ++i) want[std::size_t(i)] = old[std::size_t(i - 1)];
    WEFT_CHECK_REPORT(check_output(x, exactly(want)));
    old = values_of(x);
    x.narrow(0, 0, n - 1) = x.narrow(0, 1, n - 1) * 2;  // shift left by one
    want = old;
    for (std::int64_t i = 0; i + 1 < n; ++i) want[std::size_t(i)] = old[std::size_t(i + 1)] * 2;
    WEFT_CHECK_REPORT(check_output(x, exactly(want)));
    // Interleaved views (their byte ranges overlap): even elements from the odd ones.
    old = values_of(x);
    std::int64_t m = n / 2;
    x.slice(0, 0, 2 * m, 2) = x.slice(0, 1, 2 * m, 2);
    want = old;
    for (std::int64_t i = 0; i < m; ++i) want[std::size_t(2 * i)] = old[std::size_t(2 * i + 1)];
    WEFT_CHECK_REPORT(check_output(x, exactly(want)));
  }
}

TEST_CASE("aliasing: a fused output read by another statement at other elements is copied") {
  WEFT_TEST_RNG(rng);
  TensorView<float> a = integers(rng, Shape{9, 9}), b = integers(rng, Shape{9, 9});
  std::vector<double> av = values_of(a), bv = values_of(b);
  // b is written by statement 2 and read transposed by statement 1.
  weft::fuse(weft::assign(a, b.transpose(0, 1)), weft::assign(b, a + 1));
  std::vector<double> wa(81), wb(81);
  for (int i = 0; i < 9; ++i)
    for (int j = 0; j < 9; ++j) {
      wa[std::size_t(i * 9 + j)] = bv[std::size_t(j * 9 + i)];
      wb[std::size_t(i * 9 + j)] = av[std::size_t(i * 9 + j)] + 1;
    }
  WEFT_CHECK_REPORT(check_output(a, exactly(wa)));
  WEFT_CHECK_REPORT(check_output(b, exactly(wb)));
}

TEST_CASE("aliasing: disjoint_boxes matches the element sets of two views of one tensor") {
  // Random views with one stride pattern (two narrows, maybe steps, of a permuted base): whenever
  // disjoint_boxes says they share no element, their element offsets must say so too; and the
  // slices of cat along any dim are told apart.
  WEFT_TEST_RNG(rng);
  int apart = 0;
  for (int trial = 0; trial < 400; ++trial) {
    Shape base = random_shape(rng, 1, 4, 400);
    for (int d = 0; d < base.rank(); ++d) base[d] = std::max<std::int64_t>(base[d], 1);
    Tensor<float> t = weft::zeros<float>(base);
    std::vector<std::int64_t> order(std::size_t(base.rank()));
    for (int d = 0; d < base.rank(); ++d) order[std::size_t(d)] = d;
    for (int d = base.rank() - 1; d > 0; --d) std::swap(order[std::size_t(d)], order[std::size_t(rng.integer(0, d))]);
    const TensorView<float> p = t.permute(order);
    // A random narrow of every dim from d on (views are rebound by construction: `=` writes).
    auto narrowed = [&](auto& self, const TensorView<float>& v, int d) -> TensorView<float> {
      if (d == v.dim()) return v;
      const std::int64_t n = v.shape()[d], begin = rng.integer(0, n - 1), len = rng.integer(1, n - begin);
      return self(self, v.narrow(d, begin, len), d + 1);
    };
    const TensorView<float> a = narrowed(narrowed, p, 0), b = narrowed(narrowed, p, 0);
    auto offsets = [](const TensorView<float>& v) {
      std::vector<std::int64_t> o;
      for_each_index(v.shape(), [&](const std::vector<std::int64_t>& idx) { o.push_back(storage_index(v, idx)); });
      std::sort(o.begin(), o.end());
      return o;
    };
    const std::vector<std::int64_t> oa = offsets(a), ob = offsets(b);
    std::vector<std::int64_t> common;
    std::set_intersection(oa.begin(), oa.end(), ob.begin(), ob.end(), std::back_inserter(common));
    const bool disjoint = weft::detail::disjoint_boxes(weft::detail::tensor_ref(a), weft::detail::tensor_ref(b));
    INFO("base ", shape_str(base), ", a ", shape_str(a.shape()), " at ", a.offset(), ", b ", shape_str(b.shape()), " at ",
         b.offset());
    if (disjoint) CHECK(common.empty());
    apart += disjoint;
    // cat's slices along a random dim: always apart.
    const int d = int(rng.integer(0, base.rank() - 1));
    if (base[d] >= 2) {
      const std::int64_t cut = rng.integer(1, base[d] - 1);
      CHECK(weft::detail::disjoint_boxes(weft::detail::tensor_ref(t.narrow(d, 0, cut)),
                                         weft::detail::tensor_ref(t.narrow(d, cut, base[d] - cut))));
    }
  }
  CHECK(apart > 20);
}

}  // TEST_SUITE

// SPDX-License-Identifier: MIT
/// @file cpu: sort and argsort against std::stable_sort of (value, index) in double on every dtype: random shapes,
/// layouts and dims, many ties, ascending and descending; NaN, inf and -0.0; short rows (comparison sort), long rows
/// (radix), one long row over several threads; expressions; empty and rank-0 tensors; every error.
#include <algorithm>
#include <cmath>

#include <weft/ops/sort.hpp>

#include "dense_reference.hpp"
#include "reference.hpp"

using namespace weft_test;

namespace {

static_assert(std::is_same_v<decltype(weft::sort(std::declval<Tensor<half>>()).values), Tensor<half>>);
static_assert(std::is_same_v<decltype(weft::argsort(std::declval<Tensor<bool>>())), Tensor<std::int64_t>>);

/// torch.sort's order, written independently of the radix keys: NaN above every number (last
/// ascending, first descending), -0.0 equal to 0.0 (double's ==).
bool sorts_before(double a, double b, bool descending) {
  const bool an = std::isnan(a), bn = std::isnan(b);
  if (an || bn) return descending ? an && !bn : bn && !an;
  return descending ? a > b : a < b;
}

/// The same double, bit for bit in what a double keeps of T (the sign of zero; any NaN for a NaN).
bool same_element(double got, double want) {
  if (std::isnan(want)) return std::isnan(got);
  return got == want && std::signbit(got) == std::signbit(want);
}

/// got (values may be undefined: argsort) against a stable sort of each row of `values` (x's
/// elements, row-major over `full`) along d: every index exact, every value the input's element.
template <class T>
void check_sort(const Tensor<T>* got_values, const Tensor<std::int64_t>& got_indices, const std::vector<double>& values,
                const Shape& full, int d, bool descending) {
  INFO("sort over dim ", d, " of ", shape_str(full), ", descending ", descending);
  REQUIRE(got_indices.shape() == full);
  if (got_values) REQUIRE(got_values->shape() == full);
  const AlongDim a(full, d);
  const std::vector<double> gi = values_of(got_indices);
  const std::vector<double> gv = got_values ? values_of(*got_values) : std::vector<double>();
  std::int64_t wrong = 0;
  std::vector<std::int64_t> order(std::size_t(a.n));
  for (std::int64_t o = 0; o < a.outer; ++o)
    for (std::int64_t c = 0; c < a.inner; ++c) {
      for (std::int64_t i = 0; i < a.n; ++i) order[std::size_t(i)] = i;
      std::stable_sort(order.begin(), order.end(), [&](std::int64_t x, std::int64_t y) {
        return sorts_before(values[a.at(o, x, c)], values[a.at(o, y, c)], descending);
      });
      for (std::int64_t j = 0; j < a.n; ++j) {
        const std::int64_t want = order[std::size_t(j)];
        const std::size_t at = a.at(o, j, c);
        const bool ok = std::int64_t(gi[at]) == want && (!got_values || same_element(gv[at], values[a.at(o, want, c)]));
        if (!ok && ++wrong <= 3)
          MESSAGE("row (", o, ", ", c, ") rank ", j, ": got index ", gi[at], (got_values ? ", value " : ""),
                  (got_values ? gv[at] : 0.0), "; want index ", want, ", value ", values[a.at(o, want, c)]);
      }
    }
  CHECK(wrong == 0);
}

/// A tensor of `shape` whose elements come from a small pool (ties everywhere) with, for floating
/// T, NaN, +-inf, -0.0 and 0.0 among them.
template <class T>
Tensor<T> special_tensor(Rng& rng, const Shape& shape) {
  std::vector<double> pool = {-3, -1, 0, 1, 2.5, 7};
  if constexpr (!std::is_integral_v<T>) pool.insert(pool.end(), {NAN, -NAN, INFINITY, -INFINITY, -0.0, 0.0, -0.0});
  if constexpr (std::is_same_v<T, bool>) pool = {0, 1};
  if constexpr (std::is_unsigned_v<T> && !std::is_same_v<T, bool>) pool = {0, 1, 3, 200};
  std::vector<double> v(std::size_t(shape.numel()));
  for (double& e : v) e = pool[std::size_t(rng.integer(0, int(pool.size()) - 1))];
  Tensor<T> t = weft::empty<T>(shape);
  write_values(t, v);
  return t;
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE_TEMPLATE("sort / argsort: random shapes, layouts and dims with many ties on every dtype", T, float, double,
                   half, bfloat16, std::int32_t, std::int64_t, bool, std::int8_t, std::uint8_t, std::int16_t) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 40; ++iter) {
    const Shape full = random_shape(rng, 0, 4, 3000);
    const Layout layout = random_layout(rng, false);
    const TensorView<T> x = make_view<T>(rng, full, tie_domain<T>(rng.chance(0.3) ? 0.05 : 0.0), layout);
    const std::vector<double> values = values_of(x);
    const auto random = rng.chance(0.3) ? RandomDim{-1, std::max(full.rank(), 1) - 1} : random_dim(rng, full.rank());
    const std::int64_t dim = random.dim;
    const int d = random.wrapped;
    const bool descending = rng.chance(0.5);
    INFO("dtype ", type_name<T>(), ", iteration ", iter, ", layout ", layout_name(layout));
    const auto [v, i] = weft::sort(x, dim, descending);
    check_sort(&v, i, values, full, d, descending);
    check_sort<T>(nullptr, weft::argsort(x, dim, descending), values, full, d, descending);
  }
}

TEST_CASE_TEMPLATE("sort: NaN, inf and -0.0 among ties, short and radix-length rows, dims 0, 1 and -1 of 3-D views", T,
                   float, double, half, bfloat16, std::int32_t, std::int64_t, bool, std::int8_t, std::uint8_t,
                   std::int16_t) {
  WEFT_TEST_RNG(rng);
  const std::int64_t radix_row = weft::detail::cpu::kRadixMinRow<weft::detail::radix_key_t<T>> + 37;
  for (const Shape& s : {Shape{3, 5, 7}, Shape{2, radix_row, 3}, Shape{radix_row, 2, 5}, Shape{4, 3, radix_row}}) {
    // A permuted view of the tensor: the sorted dim is strided in memory.
    const Tensor<T> base = special_tensor<T>(rng, Shape{s[2], s[0], s[1]});
    const TensorView<const T> x = base.view().permute({1, 2, 0});
    const std::vector<double> values = values_of(x);
    for (const std::int64_t dim : {0, 1, -1})
      for (const bool descending : {false, true}) {
        const int d = int(dim < 0 ? dim + 3 : dim);
        const weft::Sorted<T> got = weft::sort(x, dim, descending);
        check_sort(&got.values, got.indices, values, s, d, descending);
      }
  }
}

TEST_CASE("sort: torch's order of NaN, inf and -0.0; equal keys keep their order in both directions") {
  const Tensor<float> x = weft::from_vector<float>({3, NAN, -0.0f, 1, 0.0f, -INFINITY, -NAN, INFINITY, 1, -0.0f});
  auto [v, i] = weft::sort(x);
  CHECK(values_of(i) == std::vector<double>{5, 2, 4, 9, 3, 8, 0, 7, 1, 6});
  const std::vector<double> vs = values_of(v);
  CHECK(std::signbit(vs[1]));  // the -0.0 at index 2 itself
  CHECK(!std::signbit(vs[2]));
  CHECK(std::isnan(vs[8]));
  CHECK(values_of(weft::argsort(x, 0, true)) == std::vector<double>{1, 6, 7, 0, 3, 8, 2, 4, 9, 5});
  const Tensor<std::int32_t> ints = weft::from_vector<std::int32_t>({-2147483647 - 1, 5, -1, 2147483647, 0, 5, -1});
  CHECK(values_of(weft::argsort(ints)) == std::vector<double>{0, 2, 6, 4, 1, 5, 3});
  CHECK(values_of(weft::argsort(ints, 0, true)) == std::vector<double>{3, 1, 5, 4, 2, 6, 0});
}

TEST_CASE("sort: one long row over several threads, and many long rows") {
  WEFT_TEST_RNG(rng);
  const int threads = weft::get_num_threads();
  for (const int use : {1, 2, 3}) {
    weft::set_num_threads(use);
    // Few distinct values in the low digits only (a grid of 1/8 over [-4, 4]): passes that move
    // nothing are skipped, the others carry many ties across the threads' chunks.
    Domain dom;
    dom.grid = 0.125;
    for (const Shape& s : {Shape{100003}, Shape{2, 40000}}) {
      const TensorView<float> x = make_view<float>(rng, s, dom, use == 3 ? Layout::strided : Layout::contiguous);
      const std::vector<double> values = values_of(x);
      for (const bool descending : {false, true}) {
        INFO(use, " threads");
        const weft::Sorted<float> got = weft::sort(x, -1, descending);
        check_sort(&got.values, got.indices, values, s, s.rank() - 1, descending);
      }
    }
    const Tensor<std::int64_t> same = weft::full<std::int64_t>(Shape{70000}, 4);  // every pass skipped
    check_sort<std::int64_t>(nullptr, weft::argsort(same), values_of(same), same.shape(), 0, false);
    const TensorView<double> wide = make_view<double>(rng, Shape{50000}, Domain{}, Layout::contiguous);
    check_sort<double>(nullptr, weft::argsort(wide, 0, true), values_of(wide), wide.shape(), 0, true);
  }
  weft::set_num_threads(threads);
}

TEST_CASE("sort: an expression input is evaluated first") {
  WEFT_TEST_RNG(rng);
  const Tensor<double> a = random_contiguous<double>(rng, Shape{9, 31}, Domain{});
  const std::vector<double> values = values_of(weft::eval(weft::abs(a) - 2.0));
  const weft::Sorted<double> got = weft::sort(weft::abs(a) - 2.0, 0, true);
  check_sort(&got.values, got.indices, values, Shape{9, 31}, 0, true);
  check_sort<double>(nullptr, weft::argsort(weft::abs(a) - 2.0), values, Shape{9, 31}, 1, false);
}

TEST_CASE("sort: empty tensors, size-1 dims and rank-0 tensors") {
  const Tensor<float> e = weft::zeros<float>(Shape{0, 5});
  CHECK(weft::sort(e).values.shape() == Shape{0, 5});
  CHECK(weft::argsort(e, 0).shape() == Shape{0, 5});
  const Tensor<float> column = weft::from_vector<float>({4, -1, 2}, Shape{3, 1});
  CHECK(values_of(weft::argsort(column)) == std::vector<double>{0, 0, 0});
  CHECK(values_of(weft::argsort(column, 0)) == std::vector<double>{1, 2, 0});
  const Tensor<float> scalar = weft::full<float>(Shape{}, 2.5f);
  for (const std::int64_t dim : {0, -1}) {  // a 0-dim input gives its element and index 0 (PyTorch)
    const weft::Sorted<float> s = weft::sort(scalar, dim);
    CHECK(s.values.dim() == 0);
    CHECK(s.values.item() == 2.5f);
    CHECK(s.indices.item() == 0);
  }
}

TEST_CASE("sort: errors name the op, the dim and the shape, and allocate nothing") {
  const Tensor<float> x = weft::zeros<float>(Shape{2, 3});
  std::string m = error_before_allocation([&] { weft::sort(x, 2); });
  CHECK(has(m, "weft::sort"));
  CHECK(has(m, "dim 2 is out of range for an input of shape [2, 3]"));
  m = error_before_allocation([&] { weft::argsort(x, -3, true); });
  CHECK(has(m, "weft::argsort"));
  CHECK(has(m, "dim -3 is out of range"));
  const Tensor<float> scalar = weft::full<float>(Shape{}, 1.0f);
  CHECK(has(error_before_allocation([&] { weft::sort(scalar, 1); }), "dim 1 is out of range"));
  CHECK(has(error_before_allocation([&] { weft::sort(Tensor<float>()); }), "empty (default-constructed)"));
  const weft::TensorView<float> gpu = fake_cuda_view<float>(Shape{2, 3});
  m = error_before_allocation([&] { weft::sort(gpu); });
  CHECK(has(m, "weft::sort"));
  CHECK(has(m, "nvcc"));
}

}  // TEST_SUITE

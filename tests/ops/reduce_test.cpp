// SPDX-License-Identifier: MIT
/// @file cpu: reductions of float tensors (sum, mean, prod, max, min, amax, amin, norm) against
/// double-precision references: random shapes, layouts, dims and keepdim; every code path of the
/// executor (rows, columns, chunks split across threads); NaN; empty ranges; every error.
#include <memory>

#include <weft/ops/reduce.hpp>

#include "dense_reference.hpp"
#include "reduce_sweep.hpp"
#include "reference.hpp"

using namespace weft_test;
using weft::Device;

namespace {

template <class X>
Tensor<float> run_op(Op op, const X& x, const std::vector<std::int64_t>& dims, bool keepdim, double p) {
  switch (op) {
    case Op::sum: return weft::sum(x, dims, keepdim);
    case Op::mean: return weft::mean(x, dims, keepdim);
    case Op::max: return weft::max(x, dims, keepdim);
    case Op::min: return weft::min(x, dims, keepdim);
    case Op::amax: return weft::amax(x, dims, keepdim);
    case Op::amin: return weft::amin(x, dims, keepdim);
    default: return weft::norm(x, p, dims, keepdim);
  }
}

constexpr double kFloatEps = eps_of<float>();

// Result dtypes follow PyTorch: decided at compile time, so checked at compile time (this file
// does not compile when one breaks).
static_assert(std::is_same_v<decltype(weft::sum(std::declval<Tensor<bool>>())), Tensor<std::int64_t>>);
static_assert(std::is_same_v<decltype(weft::sum(std::declval<Tensor<std::int32_t>>(), 0))::value_type, std::int64_t>);
static_assert(std::is_same_v<decltype(weft::sum(std::declval<Tensor<half>>())), Tensor<half>>);
static_assert(std::is_same_v<decltype(weft::sum(std::declval<Tensor<float>>() > 0.0)), Tensor<std::int64_t>>);
static_assert(std::is_same_v<decltype(weft::mean(std::declval<Tensor<bfloat16>>())), Tensor<bfloat16>>);
static_assert(std::is_same_v<decltype(weft::amax(std::declval<Tensor<std::int32_t>>())), Tensor<std::int32_t>>);
static_assert(std::is_same_v<decltype(weft::max(std::declval<Tensor<bool>>(), 1))::value_type, bool>);
static_assert(std::is_same_v<decltype(weft::norm(std::declval<Tensor<double>>())), Tensor<double>>);
static_assert(std::is_same_v<decltype(weft::sum(std::declval<Tensor<half>>() * 2.0)), Tensor<half>>);
static_assert(std::is_same_v<decltype(weft::prod(std::declval<Tensor<bool>>())), Tensor<std::int64_t>>);
static_assert(std::is_same_v<decltype(weft::prod(std::declval<Tensor<std::int32_t>>(), 0)), Tensor<std::int64_t>>);
static_assert(std::is_same_v<decltype(weft::prod(std::declval<Tensor<bfloat16>>(), {0})), Tensor<bfloat16>>);

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("reduce: random shapes, layouts, dims and keepdim (float32, every op)") {
  WEFT_TEST_RNG(rng);
  const double ps[] = {1, 2, 3, 0.5, 0, INFINITY, -INFINITY};
  for (int iter = 0; iter < 120; ++iter) {
    const Shape full = random_shape(rng, 0, 5, 5000);
    const Layout layout = random_layout(rng, false);
    Domain dom;
    dom.nan_chance = rng.chance(0.1) ? 0.01 : 0.0;
    const TensorView<float> x = make_view<float>(rng, full, dom, layout);
    const RandomReduction c(rng, x);
    INFO("iteration ", iter, ", layout ", layout_name(layout), ", ", c.dims.size(), " dims listed");
    for (Op op : {Op::sum, Op::mean, Op::max, Op::min, Op::amax, Op::amin, Op::norm}) {
      const double p = rng.pick(ps);
      const bool no_identity = op == Op::max || op == Op::min || op == Op::amax || op == Op::amin ||
                               (op == Op::norm && std::isinf(p));
      if (no_identity && c.n_red == 0) {
        CHECK_THROWS_AS(run_op(op, x, c.dims, c.keepdim, p), weft::Error);
        continue;
      }
      c.check(run_op(op, x, c.dims, c.keepdim, p), op, p, kFloatEps);
    }
  }
}

TEST_CASE("reduce: prod over random shapes, layouts, dims and keepdim (float32)") {
  WEFT_TEST_RNG(rng);
  const Domain near_one = near_one_domain<float>();  // products of 5000 stay within float's range
  for (int iter = 0; iter < 60; ++iter) {
    const Shape full = random_shape(rng, 0, 5, 5000);
    const Layout layout = random_layout(rng, false);
    const TensorView<float> x = make_view<float>(rng, full, near_one, layout);
    const RandomReduction c(rng, x);
    INFO("iteration ", iter, ", layout ", layout_name(layout));
    c.check(weft::prod(x, c.dims, c.keepdim), Op::prod, 0, kFloatEps);
  }
  // An expression, and products that overflow float, vanish, or hold a zero, an inf or a NaN.
  const TensorView<float> y = make_view<float>(rng, Shape{6, 40}, near_one, Layout::permuted);
  check_reduction(weft::prod(y * 2.0, 1), Op::prod, values_of(weft::eval(y * 2.0)), Shape{6, 40},
                  reduce_mask(2, {1}), false, 0, kFloatEps);
  const Tensor<float> big = weft::full<float>(Shape{2, 100}, 1e3f);
  CHECK(values_of(weft::prod(big, 1)) == std::vector<double>{INFINITY, INFINITY});
  CHECK(weft::prod(weft::full<float>(Shape{100}, 1e-3f)).item() == 0.0f);
  const std::vector<double> special = values_of(weft::prod(weft::from_vector<float>({2, 0, INFINITY, 3, NAN, 1}, Shape{3, 2}), 1));
  CHECK(special[0] == 0);
  CHECK(special[1] == INFINITY);
  CHECK(std::isnan(special[2]));
  CHECK(std::isnan(weft::prod(weft::from_vector<float>({0, INFINITY})).item()));  // 0 * inf
}

TEST_CASE("reduce: whole-tensor overloads return rank-0 tensors") {
  WEFT_TEST_RNG(rng);
  const TensorView<float> x = make_view<float>(rng, Shape{7, 33}, Domain{}, Layout::permuted_strided);
  const std::vector<double> v = values_of(x);
  const std::vector<bool> all(2, true);
  check_reduction(weft::sum(x), Op::sum, v, x.shape(), all, false, 0, kFloatEps);
  check_reduction(weft::mean(x), Op::mean, v, x.shape(), all, false, 0, kFloatEps);
  check_reduction(weft::max(x), Op::max, v, x.shape(), all, false, 0, kFloatEps);
  check_reduction(weft::min(x), Op::min, v, x.shape(), all, false, 0, kFloatEps);
  check_reduction(weft::amax(x), Op::amax, v, x.shape(), all, false, 0, kFloatEps);
  check_reduction(weft::amin(x), Op::amin, v, x.shape(), all, false, 0, kFloatEps);
  check_reduction(weft::norm(x), Op::norm, v, x.shape(), all, false, 2, kFloatEps);
  check_reduction(weft::norm(x, 1), Op::norm, v, x.shape(), all, false, 1, kFloatEps);
  check_reduction(weft::prod(x), Op::prod, v, x.shape(), all, false, 0, kFloatEps);
  // An empty dim list also means every dim (as in PyTorch); keepdim keeps them as 1.
  check_reduction(weft::sum(x, std::vector<std::int64_t>{}, true), Op::sum, v, x.shape(), all, true, 0, kFloatEps);
  check_reduction(weft::sum(x, {0, 1}), Op::sum, v, x.shape(), all, false, 0, kFloatEps);
  check_reduction(weft::sum(x, {-1, -2}, true), Op::sum, v, x.shape(), all, true, 0, kFloatEps);
}

TEST_CASE("reduce: executor paths (rows, columns, narrow rows, chunks across threads)") {
  WEFT_TEST_RNG(rng);
  struct Case {
    Shape shape;
    std::vector<std::int64_t> dims;
  };
  const std::vector<Case> cases = {
      {{1000003}, {0}},             // one long row, split into chunks across threads
      {{3, 40000}, {1}},            // few long rows: chunks
      {{64, 17}, {1}},              // rows shorter than the accumulator block, with tails
      {{5, 1}, {1}},                // size-1 reduced dim: no reduction at all
      {{200000, 3}, {0}},           // a column reduction narrower than one packet: chunks
      {{7, 1}, {0}},                // columns of width 1
      {{3000, 65}, {0}},            // columns: 4-packet blocks, the last one slides left
      {{2, 5, 130}, {1}},           // columns under an outer kept dim
      {{31, 47, 16}, {0, 2}},       // rows and columns mixed
      {{9, 8, 7, 6}, {1, 3}},       // reduced dims that do not merge
      {{6, 7, 8, 9}, {0, 1}},       // reduced dims that merge, column layout
      {{4, 4096, 2}, {1}},          // long columns, few outputs
  };
  for (const Case& c : cases) {
    for (Layout layout : {Layout::contiguous, Layout::permuted, Layout::strided, Layout::expanded}) {
      INFO("shape ", shape_str(c.shape), ", layout ", layout_name(layout));
      const TensorView<float> x = make_view<float>(rng, c.shape, Domain{}, layout);
      const std::vector<double> v = values_of(x);
      const std::vector<bool> mask = reduce_mask(c.shape.rank(), c.dims);
      check_reduction(weft::sum(x, c.dims), Op::sum, v, c.shape, mask, false, 0, kFloatEps);
      check_reduction(weft::amax(x, c.dims, true), Op::amax, v, c.shape, mask, true, 0, kFloatEps);
    }
  }
}

TEST_CASE("reduce: a large sum stays within the pairwise bound") {
  // 2^22 values of one sign: a naive float loop loses ~n * eps / 2 (the running
  // sum grows past every term), the pairwise cascade ~log2(n) * eps.
  std::vector<float> values(std::size_t(1) << 22);
  WEFT_TEST_RNG(rng);
  for (float& f : values) f = float(rng.uniform(0.5, 1.5));
  double exact = 0;
  for (float f : values) exact += f;
  const float got = weft::sum(weft::from_vector(values)).item();
  CHECK(std::fabs(got - exact) <= sum_error_bound(std::int64_t(values.size()), kFloatEps, exact));
  CHECK(std::fabs(got - exact) <= 64 * kFloatEps * exact);  // far tighter than the n * eps of a naive loop
}

TEST_CASE("reduce: NaN propagates through max, min, amax, amin and the inf norm") {
  for (std::int64_t n : {5, 16, 64, 100, 1000}) {
    for (std::int64_t at : {std::int64_t(0), n / 2, n - 1}) {
      std::vector<float> v(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) v[std::size_t(i)] = float(i % 7) - 3;
      v[std::size_t(at)] = NAN;
      const Tensor<float> row = weft::from_vector(v);
      INFO("n ", n, " NaN at ", at);
      CHECK(std::isnan(weft::max(row).item()));
      CHECK(std::isnan(weft::min(row).item()));
      CHECK(std::isnan(weft::eval(weft::amax(row, 0)).item()));
      CHECK(std::isnan(weft::eval(weft::amin(row, 0)).item()));
      CHECK(std::isnan(weft::norm(row, INFINITY).item()));
      // The same values down a column (the column layout), next to a NaN-free column.
      const TensorView<float> cols = weft::from_vector(v, Shape{n, 1}).expand(Shape{n, 40});
      const Tensor<float> both = weft::eval(cols + weft::from_vector(std::vector<float>(40, 0.f)));
      const std::vector<double> m = values_of(weft::amax(both, 0));
      for (double x : m) CHECK(std::isnan(x));
    }
  }
}

TEST_CASE("reduce: empty ranges, size-1 dims and rank-0 tensors") {
  const Tensor<float> empty_row = weft::zeros<float>(Shape{0});
  CHECK(weft::sum(empty_row).item() == 0.0f);
  CHECK(weft::sum(empty_row).dim() == 0);
  CHECK(std::isnan(weft::mean(empty_row).item()));
  CHECK(weft::norm(empty_row).item() == 0.0f);
  CHECK(weft::norm(empty_row, 0).item() == 0.0f);
  CHECK(weft::prod(empty_row).item() == 1.0f);  // the empty product
  CHECK(values_of(weft::prod(weft::zeros<std::int32_t>(Shape{0, 2}), 0)) == std::vector<double>{1, 1});

  const Tensor<float> e30 = weft::zeros<float>(Shape{3, 0});
  CHECK(values_of(weft::sum(e30, 1)) == std::vector<double>(3, 0.0));
  const std::vector<double> means = values_of(weft::mean(e30, -1, true));
  CHECK(weft::mean(e30, -1, true).shape() == Shape{3, 1});
  for (double m : means) CHECK(std::isnan(m));
  CHECK(weft::amax(e30, 0).shape() == Shape{0});  // reduces 3 values per (no) output: fine
  CHECK(weft::sum(e30, 0).shape() == Shape{0});

  const Tensor<std::int32_t> ints = weft::zeros<std::int32_t>(Shape{0, 2});
  CHECK(values_of(weft::sum(ints, 0)) == std::vector<double>{0, 0});

  const Tensor<float> scalar = weft::full<float>(Shape{}, 2.5f);
  CHECK(weft::sum(scalar).item() == 2.5f);
  CHECK(weft::sum(scalar, 0).shape().rank() == 0);
  CHECK(weft::amax(scalar, -1, true).shape().rank() == 0);
  CHECK(weft::mean(scalar).item() == 2.5f);
  CHECK(weft::norm(scalar, 2).item() == 2.5f);

  const Tensor<float> ones = weft::full<float>(Shape{1, 4, 1}, 1.5f);
  CHECK(values_of(weft::sum(ones, {0, 2})) == std::vector<double>(4, 1.5));
  CHECK(weft::sum(ones, {0, 2}, true).shape() == Shape{1, 4, 1});
}

TEST_CASE("reduce: errors name the op, the shapes and the fix") {
  const Tensor<float> x = weft::zeros<float>(Shape{2, 3});
  std::string m = error_of([&] { weft::sum(x, 2); });
  CHECK(has(m, "weft::sum"));
  CHECK(has(m, "out of range"));
  CHECK(has(m, "[2, 3]"));
  CHECK(has(error_of([&] { weft::norm(x, 2, {0, -3}); }), "dim -3 is out of range for an input of shape [2, 3]"));
  m = error_of([&] { weft::amax(x, {1, -1}); });
  CHECK(has(m, "weft::amax"));
  CHECK(has(m, "more than once"));
  CHECK(has(m, "[2, 3]"));
  m = error_of([&] { weft::all(x, 2); });
  CHECK(has(m, "weft::all"));
  CHECK(has(m, "out of range"));
  CHECK(has(error_of([&] { weft::any(x, {0, 0}); }), "weft::any"));
  m = error_of([&] { weft::prod(x, {0, 2}); });
  CHECK(has(m, "weft::prod"));
  CHECK(has(m, "dim 2 is out of range for an input of shape [2, 3]"));

  const Tensor<float> e = weft::zeros<float>(Shape{4, 0});
  for (auto f : {+[](const weft::TensorBase<float>& t) { weft::max(t); }, +[](const weft::TensorBase<float>& t) { weft::min(t, 1); },
                 +[](const weft::TensorBase<float>& t) { weft::amax(t, -1); }, +[](const weft::TensorBase<float>& t) { weft::amin(t); },
                 +[](const weft::TensorBase<float>& t) { weft::norm(t, INFINITY); }}) {
    m = error_of([&] { f(e); });
    CHECK(has(m, "[4, 0]"));
    CHECK(has(m, "of size 0"));
    CHECK(has(m, "empty"));
  }
  // any and all of nothing are false and true (no error), as in PyTorch.
  CHECK(!weft::any(e).item());
  CHECK(weft::all(e).item());
  CHECK(values_of(weft::all(e, 1)) == std::vector<double>{1, 1, 1, 1});
  CHECK(has(error_of([&] { weft::max(e); }), "weft::max"));
  CHECK(has(error_of([&] { weft::amin(e, 1); }), "weft::amin"));

  const Tensor<std::int32_t> ints = weft::zeros<std::int32_t>(Shape{5});
  m = error_of([&] { weft::mean(ints); });
  CHECK(has(m, "weft::mean"));
  CHECK(has(m, "int32"));
  CHECK(has(m, "[5]"));
  CHECK(has(m, "cast"));
  m = error_of([&] { weft::norm(ints, 2, 0); });
  CHECK(has(m, "weft::norm"));
  CHECK(has(m, "floating"));

  const Tensor<float> y = weft::zeros<float>(Shape{4});
  m = error_of([&] { weft::sum(x * y); });
  CHECK(has(m, "weft::sum"));
  CHECK(has(m, "[2, 3], [4]"));
  CHECK(has(m, "broadcast"));
  m = error_of([&] { weft::mean(Tensor<float>()); });
  CHECK(has(m, "weft::mean"));
  CHECK(has(m, "empty"));

  // A CUDA tensor in a translation unit compiled without nvcc, and mixed devices.
  auto fake = std::make_shared<weft::Storage>(nullptr, 0, Device::cuda(), nullptr);
  const weft::TensorView<float> gpu(fake, Shape{2, 3}, weft::contiguous_strides(Shape{2, 3}), 0);
  m = error_of([&] { weft::sum(gpu); });
  CHECK(has(m, "weft::sum"));
  CHECK(has(m, "nvcc"));
  m = error_of([&] { weft::amax(gpu + x, 0); });
  CHECK(has(m, "weft::amax"));
  CHECK(has(m, "cuda:0"));
  CHECK(has(m, "cpu"));
}

}  // TEST_SUITE

// SPDX-License-Identifier: MIT
/// @file cpu: nonzero and masked_select against plain loops over the elements in row-major order on every dtype:
/// random shapes and layouts, NaN and -0.0, broadcast masks, expressions, rank-0 and empty tensors, long inputs over
/// several threads; every error.
#include <cmath>

#include <weft/ops/select.hpp>

#include "dense_reference.hpp"
#include "reference.hpp"

using namespace weft_test;

namespace {

static_assert(std::is_same_v<decltype(weft::nonzero(std::declval<Tensor<half>>())), Tensor<std::int64_t>>);
static_assert(std::is_same_v<decltype(weft::masked_select(std::declval<Tensor<half>>(), std::declval<Tensor<bool>>())),
                             Tensor<half>>);

/// nonzero's reference: the row-major coordinates of every value != 0 (NaN included).
std::vector<double> nonzero_reference(const std::vector<double>& values, const Shape& shape) {
  std::vector<double> out;
  std::int64_t coords[weft::kMaxRank];
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i] != 0 || std::isnan(values[i])) {
      weft::detail::unravel(std::int64_t(i), shape.begin(), shape.rank(), coords);
      out.insert(out.end(), coords, coords + shape.rank());
    }
  return out;
}

bool same_elements(const std::vector<double>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return false;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i])))) return false;
  return true;
}

/// The broadcast shape's flat index i read from an operand of `shape` (trailing-aligned, size-1 dims repeated).
std::size_t broadcast_source(std::int64_t i, const Shape& to, const Shape& shape) {
  std::int64_t coords[weft::kMaxRank];
  weft::detail::unravel(i, to.begin(), to.rank(), coords);
  std::int64_t at = 0;
  for (int d = 0; d < shape.rank(); ++d) {
    const std::int64_t c = coords[d + to.rank() - shape.rank()];
    at = at * shape[d] + (shape[d] == 1 ? 0 : c);
  }
  return std::size_t(at);
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE_TEMPLATE("nonzero: random shapes and layouts on every dtype, zeros, NaN and -0.0", T, float, double, half,
                   bfloat16, std::int32_t, std::int64_t, bool, std::int8_t, std::uint8_t, std::int16_t) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 30; ++iter) {
    const Shape full = random_shape(rng, 0, 4, 3000);
    Domain dom = tie_domain<T>(rng.chance(0.3) ? 0.05 : 0.0);
    dom.zero_chance = rng.chance(0.5) ? 0.6 : 0.1;
    const Layout layout = random_layout(rng, false);
    const TensorView<T> x = make_view<T>(rng, full, dom, layout);
    const std::vector<double> values = values_of(x);
    INFO("dtype ", type_name<T>(), ", iteration ", iter, ", shape ", shape_str(full), ", layout ", layout_name(layout));
    const Tensor<std::int64_t> got = weft::nonzero(x);
    const std::vector<double> want = nonzero_reference(values, full);
    REQUIRE(got.dim() == 2);
    CHECK(got.shape()[1] == full.rank());
    CHECK(values_of(got) == want);
  }
  if constexpr (!std::is_integral_v<T>) {
    const Tensor<T> special = weft::from_vector<T>({T(0.0f), T(-0.0f), T(NAN), T(INFINITY), T(0.0f), T(-1.0f)});
    CHECK(values_of(weft::nonzero(special)) == std::vector<double>{2, 3, 5});
  }
}

TEST_CASE_TEMPLATE("masked_select: random shapes, layouts and broadcast masks on every dtype", T, float, double, half,
                   bfloat16, std::int32_t, std::int64_t, bool, std::int8_t, std::uint8_t, std::int16_t) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 30; ++iter) {
    const Shape full = random_shape(rng, 0, 4, 3000);
    // The mask drops random dims to 1 or leading dims entirely; sometimes x is the broadcast one.
    Shape small;
    const int lead = full.rank() > 0 ? int(rng.integer(0, full.rank())) : 0;
    for (int d = lead; d < full.rank(); ++d) small.push_back(rng.chance(0.3) ? 1 : full[d]);
    const bool x_small = rng.chance(0.25);
    const Shape xs = x_small ? small : full, ms = x_small ? full : small;
    const TensorView<T> x = make_view<T>(rng, xs, tie_domain<T>(0.05), random_layout(rng, false));
    const TensorView<bool> mask = make_view<bool>(rng, ms, Domain{}, random_layout(rng, false));
    const std::vector<double> xv = values_of(x), mv = values_of(mask);
    std::vector<double> want;
    for (std::int64_t i = 0; i < full.numel(); ++i)
      if (mv[broadcast_source(i, full, ms)] != 0) want.push_back(xv[broadcast_source(i, full, xs)]);
    INFO("dtype ", type_name<T>(), ", iteration ", iter, ", x ", shape_str(xs), ", mask ", shape_str(ms));
    const Tensor<T> got = weft::masked_select(x, mask);
    REQUIRE(got.shape() == Shape{std::int64_t(want.size())});
    CHECK(same_elements(values_of(got), want));
  }
}

TEST_CASE("nonzero / masked_select: long inputs over several threads, expressions, rank-0 and empty tensors") {
  WEFT_TEST_RNG(rng);
  const int threads = weft::get_num_threads();
  for (const int use : {1, 3}) {
    weft::set_num_threads(use);
    Domain dom;
    dom.zero_chance = 0.7;
    const Tensor<float> x = random_contiguous<float>(rng, Shape{7, 30011}, dom);
    const std::vector<double> values = values_of(x);
    CHECK(values_of(weft::nonzero(x)) == nonzero_reference(values, x.shape()));
    const Tensor<float> kept = weft::masked_select(x, x > 1.0f);  // an expression mask
    std::vector<double> want;
    for (double v : values)
      if (v > 1.0) want.push_back(v);
    CHECK(values_of(kept) == want);
  }
  weft::set_num_threads(threads);

  const Tensor<double> a = random_contiguous<double>(rng, Shape{5, 6}, Domain{});
  CHECK(values_of(weft::nonzero(a > 0.0)) == nonzero_reference(values_of(weft::eval(a > 0.0)), a.shape()));
  // Rank 0: shape [count, 0] (torch.nonzero), and a 1-element selection.
  CHECK(weft::nonzero(weft::full<float>(Shape{}, 2.0f)).shape() == Shape{1, 0});
  CHECK(weft::nonzero(weft::full<float>(Shape{}, 0.0f)).shape() == Shape{0, 0});
  CHECK(values_of(weft::masked_select(weft::full<float>(Shape{}, 2.0f), weft::full<bool>(Shape{3}, true))) ==
        std::vector<double>{2, 2, 2});
  CHECK(weft::nonzero(weft::zeros<float>(Shape{3, 0, 2})).shape() == Shape{0, 3});
  CHECK(weft::nonzero(weft::zeros<float>(Shape{3, 4})).shape() == Shape{0, 2});
  CHECK(weft::masked_select(weft::zeros<float>(Shape{0, 4}), weft::full<bool>(Shape{4}, true)).shape() == Shape{0});
}

TEST_CASE("nonzero / masked_select: errors name the op, the shapes and the fix, and allocate nothing") {
  const Tensor<float> x = weft::zeros<float>(Shape{2, 3});
  const Tensor<bool> mask = weft::full<bool>(Shape{4}, true);
  std::string m = error_before_allocation([&] { weft::masked_select(x, mask); });
  CHECK(has(m, "weft::masked_select"));
  CHECK(has(m, "[2, 3]"));
  CHECK(has(m, "[4]"));
  CHECK(has(m, "cannot be broadcast together"));
  CHECK(has(error_before_allocation([&] { weft::masked_select(x, Tensor<bool>()); }), "the mask is an empty"));
  CHECK(has(error_before_allocation([&] { weft::nonzero(Tensor<float>()); }), "empty (default-constructed)"));
  const weft::TensorView<float> gpu = fake_cuda_view<float>(Shape{2, 3});
  const weft::TensorView<bool> gpu_mask = fake_cuda_view<bool>(Shape{2, 3});
  m = error_before_allocation([&] { weft::masked_select(x, gpu_mask); });
  CHECK(has(m, "is on cpu but the mask"));
  CHECK(has(m, ".to(device)"));
  CHECK(has(error_before_allocation([&] { weft::nonzero(gpu); }), "nvcc"));
  CHECK(has(error_before_allocation([&] { weft::masked_select(gpu, gpu_mask); }), "nvcc"));
}

}  // TEST_SUITE

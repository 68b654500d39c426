// SPDX-License-Identifier: MIT
/// @file cpu: pad in every mode against an index loop in the test (random shapes, pads of every sign including crops into the borders, non-contiguous inputs, every dtype), the box writer into poisoned strided destinations, and every error.
#include <weft/ops/pad.hpp>

#include "error_check.hpp"
#include "reference.hpp"

using namespace weft_test;
using weft::PadMode;

namespace {

/// pad's reference: output coordinate i of a padded dim reads input coordinate j = i - left; j
/// outside [0, n) is the value (constant), -j or 2(n-1) - j (reflect), or clamped (replicate).
template <class T>
Report check_pad(const weft::TensorBase<T>& out, const TensorView<T>& x, const std::vector<std::int64_t>& pads,
                 PadMode mode, double value) {
  return check_output(out, [&](std::vector<std::int64_t> idx) {
    for (std::size_t p = 0; p < pads.size(); p += 2) {
      const std::size_t d = std::size_t(x.dim()) - 1 - p / 2;
      const std::int64_t n = x.shape()[int(d)], j = idx[d] - pads[p];
      if (j >= 0 && j < n) {
        idx[d] = j;
      } else if (mode == PadMode::constant) {
        return Expect{value};
      } else if (mode == PadMode::reflect) {
        idx[d] = j < 0 ? -j : 2 * (n - 1) - j;
      } else {
        idx[d] = j < 0 ? 0 : n - 1;
      }
    }
    return Expect{value_at(x, idx)};
  });
}

/// Random pads for the last k dims that the mode accepts: crops of any depth (into the far border
/// too), borders up to 2 beyond the extent (reflect: below it).
std::vector<std::int64_t> random_pads(Rng& rng, const Shape& shape, PadMode mode) {
  std::vector<std::int64_t> pads;
  const int k = int(rng.integer(0, shape.rank()));
  for (int i = 0; i < k; ++i) {
    const std::int64_t n = shape[shape.rank() - 1 - i];
    const std::int64_t hi = mode == PadMode::reflect ? n - 1 : mode == PadMode::replicate && n == 0 ? 0 : n + 2;
    for (;;) {
      const std::int64_t left = rng.integer(-n, hi), right = rng.integer(-n, hi);
      if (n + left + right >= 0 && left <= hi && right <= hi) {
        pads.push_back(left);
        pads.push_back(right);
        break;
      }
    }
  }
  return pads;
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE_TEMPLATE("pad: every mode, random pads of every sign, layouts", T, float, double, half, bfloat16,
                   std::int32_t, std::int64_t, bool) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 60; ++iter) {
    const PadMode mode = PadMode(rng.integer(0, 2));
    Shape shape = random_shape(rng, 1, 4, 400);
    if (mode == PadMode::reflect)  // reflect needs pads below the extent: give it room
      for (std::int64_t& e : shape) e = std::max<std::int64_t>(e, 1);
    const TensorView<T> x = make_view<T>(rng, shape, Domain{}, random_layout(rng, false));
    const std::vector<std::int64_t> pads = random_pads(rng, shape, mode);
    const T value = random_value<T>(rng, Domain{});
    const double want_value = decode<T>(reinterpret_cast<const unsigned char*>(&value));
    std::string pad_list;
    for (std::int64_t p : pads) pad_list += std::to_string(p) + " ";
    INFO("dtype ", type_name<T>(), ", shape ", shape_str(shape), ", mode ", weft::detail::pad_mode_name(mode),
         ", pads ", pad_list);
    Shape want = shape;
    for (std::size_t p = 0; p < pads.size(); p += 2) want[shape.rank() - 1 - int(p / 2)] += pads[p] + pads[p + 1];
    if constexpr (std::is_arithmetic_v<T>) {
      const Tensor<T> out = weft::pad(x, pads, mode, value);
      REQUIRE(out.shape() == want);
      WEFT_CHECK_REPORT(check_pad(out, x, pads, mode, want_value));
    }
    // The same boxes into a poisoned, strided destination, the value as pad converts it.
    Shape shape_out;
    const weft::detail::DimRuns runs = weft::detail::pad_runs(shape, pads, mode, shape_out);
    REQUIRE(shape_out == want);
    const TensorView<T> dst = make_destination<T>(rng, want, random_layout(rng, true));
    weft::detail::write_boxes(dst, TensorView<const T>(x), runs,
                              weft::detail::number_of_kind<T>("pad", want_value));
    WEFT_CHECK_REPORT(check_pad(dst, x, pads, mode, want_value));
  }
}

TEST_CASE("pad: torch's examples, a default value, expression inputs, 3^k boxes") {
  const Tensor<float> x(weft::arange<float>(6).reshape({1, 6}));
  auto values = [](const Tensor<float>& t) { return t.to_vector(); };
  CHECK(values(weft::pad(x, {-2, 3}, PadMode::reflect)) == std::vector<float>{2, 3, 4, 5, 4, 3, 2});
  CHECK(values(weft::pad(x, {3, -4}, PadMode::reflect)) == std::vector<float>{3, 2, 1, 0, 1});
  CHECK(values(weft::pad(x, {-2, 3}, PadMode::replicate)) == std::vector<float>{2, 3, 4, 5, 5, 5, 5});
  CHECK(values(weft::pad(x, {2, -7}, PadMode::replicate)) == std::vector<float>{0});
  CHECK(values(weft::pad(x * 2.0f, {1, 1})) == std::vector<float>{0, 0, 2, 4, 6, 8, 10, 0});
  WEFT_TEST_RNG(rng);
  const TensorView<double> y = make_view<double>(rng, Shape{3, 4, 5}, Domain{}, Layout::permuted);
  const std::vector<std::int64_t> pads{2, 1, -1, 3, 1, 2};
  WEFT_CHECK_REPORT(check_pad(weft::pad(y, pads, PadMode::replicate), y, pads, PadMode::replicate, 0));
  WEFT_CHECK_REPORT(check_pad(weft::pad(y, pads, PadMode::constant, -1.5), y, pads, PadMode::constant, -1.5));
}

TEST_CASE("pad: errors name the op, the pads, the shape and the fix") {
  const Tensor<float> x = weft::ones<float>(Shape{2, 3});
  std::string m = error_of([&] { weft::pad(x, {1, 2, 3}); });
  CHECK(has(m, "pad: got 3 pads for an input of shape [2, 3]; give (left, right) pairs"));
  m = error_of([&] { weft::pad(x, {1, 1, 1, 1, 1, 1}); });
  CHECK(has(m, "got 6 pads"));
  m = error_of([&] { weft::pad(x, {3, 0}, PadMode::reflect); });
  CHECK(has(m, "pad: reflect pads (3, 0) of dim 1 of shape [2, 3] must be smaller than its extent 3"));
  m = error_of([&] { weft::pad(x, {0, 0, 0, 2}, PadMode::reflect); });
  CHECK(has(m, "reflect pads (0, 2) of dim 0"));
  m = error_of([&] { weft::pad(x, {-2, -2}); });
  CHECK(has(m, "pad: pads (-2, -2) of dim 1 of shape [2, 3] leave a negative extent -1"));
  m = error_of([&] { weft::pad(weft::ones<float>(Shape{2, 0}), {1, 0}, PadMode::replicate); });
  CHECK(has(m, "pad: replicate cannot pad dim 1 of shape [2, 0]"));
  m = error_of([&] { weft::pad(weft::ones<std::int32_t>(Shape{2}), {1, 0}, PadMode::constant, 3e9); });
  CHECK(has(m, "pad: value 3e+09 does not fit"));
}

}  // TEST_SUITE

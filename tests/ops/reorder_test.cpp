// SPDX-License-Identifier: MIT
/// @file cpu: flip, roll, repeat and tile against index loops in the test (random shapes, dims, shifts larger than the extent and negative, repeats, non-contiguous inputs, every dtype), the box writer into poisoned strided destinations, and every error.
#include <weft/ops/flip.hpp>
#include <weft/ops/repeat.hpp>
#include <weft/ops/roll.hpp>

#include "dense_reference.hpp"
#include "error_check.hpp"
#include "reference.hpp"

using namespace weft_test;

namespace {

/// Random distinct dims of a rank (each once), spelled negative half the time.
std::vector<std::int64_t> distinct_random_dims(Rng& rng, int rank) {
  std::vector<std::int64_t> dims;
  for (int d = 0; d < rank; ++d)
    if (rng.chance(0.5)) dims.push_back(rng.chance(0.5) ? d - rank : d);
  std::shuffle(dims.begin(), dims.end(), rng.gen);
  return dims;
}

int wrapped(std::int64_t d, int rank) { return int(d < 0 ? d + rank : d); }

/// flip's reference: out[idx] = x[idx with n - 1 - i along each flipped dim].
template <class T>
Report check_flip(const weft::TensorBase<T>& out, const TensorView<T>& x, const std::vector<std::int64_t>& dims) {
  return check_output(out, [&](std::vector<std::int64_t> idx) {
    for (std::int64_t d : dims) {
      const std::size_t u = std::size_t(wrapped(d, x.dim()));
      idx[u] = x.shape()[int(u)] - 1 - idx[u];
    }
    return Expect{value_at(x, idx)};
  });
}

/// roll's reference: out[idx] = x[idx with (i - shift) mod n along each rolled dim].
template <class T>
Report check_roll(const weft::TensorBase<T>& out, const TensorView<T>& x, const std::vector<std::int64_t>& shifts,
                  const std::vector<std::int64_t>& dims) {
  return check_output(out, [&](std::vector<std::int64_t> idx) {
    for (std::size_t k = 0; k < dims.size(); ++k) {
      const std::size_t u = std::size_t(wrapped(dims[k], x.dim()));
      const std::int64_t n = x.shape()[int(u)];
      idx[u] = (((idx[u] - shifts[k]) % n) + n) % n;
    }
    return Expect{value_at(x, idx)};
  });
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE_TEMPLATE("flip: random shapes, dims and layouts", T, float, double, half, bfloat16, std::int32_t,
                   std::int64_t, bool) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 30; ++iter) {
    const Shape shape = random_shape(rng, 1, 5, 800);
    const TensorView<T> x = make_view<T>(rng, shape, Domain{}, random_layout(rng, false));
    const std::vector<std::int64_t> dims = distinct_random_dims(rng, shape.rank());
    INFO("dtype ", type_name<T>(), ", shape ", shape_str(shape), ", dims ", dims.size());
    const Tensor<T> out = weft::flip(x, dims);
    REQUIRE(out.shape() == shape);
    WEFT_CHECK_REPORT(check_flip(out, x, dims));
    // The same boxes into a poisoned, strided destination: every element written once, nothing
    // around it touched.
    const TensorView<T> dst = make_destination<T>(rng, shape, random_layout(rng, true));
    weft::detail::write_boxes(dst, TensorView<const T>(x), weft::detail::flip_runs("flip", shape, dims), weft::detail::NoFill{});
    WEFT_CHECK_REPORT(check_flip(dst, x, dims));
  }
}

TEST_CASE_TEMPLATE("roll: random dims, negative shifts and shifts beyond the extent", T, float, double, half,
                   bfloat16, std::int32_t, std::int64_t, bool) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 30; ++iter) {
    const Shape shape = random_shape(rng, 1, 5, 800);
    const TensorView<T> x = make_view<T>(rng, shape, Domain{}, random_layout(rng, false));
    const std::vector<std::int64_t> dims = distinct_random_dims(rng, shape.rank());
    std::vector<std::int64_t> shifts;
    for (std::int64_t d : dims) {
      const std::int64_t n = shape[wrapped(d, shape.rank())];
      shifts.push_back(rng.integer(-3 * n - 2, 3 * n + 2));
    }
    INFO("dtype ", type_name<T>(), ", shape ", shape_str(shape), ", dims ", dims.size());
    if (shape.numel() == 0) continue;
    const Tensor<T> out = weft::roll(x, shifts, dims);
    REQUIRE(out.shape() == shape);
    WEFT_CHECK_REPORT(check_roll(out, x, shifts, dims));
    const TensorView<T> dst = make_destination<T>(rng, shape, random_layout(rng, true));
    weft::detail::write_boxes(dst, TensorView<const T>(x), weft::detail::roll_runs("roll", shape, shifts, dims), weft::detail::NoFill{});
    WEFT_CHECK_REPORT(check_roll(dst, x, shifts, dims));
    // One dim, and no dims: x flattened in row-major order, rolled, reshaped.
    const int d = int(rng.integer(0, shape.rank() - 1));
    const std::int64_t s = rng.integer(-2 * shape.numel(), 2 * shape.numel());
    WEFT_CHECK_REPORT(check_roll(weft::roll(x, s, d), x, {s}, {d}));
    const Tensor<T> flat = weft::roll(x, s);
    REQUIRE(flat.shape() == shape);
    const std::vector<double> xv = values_of(x);
    const std::int64_t n = shape.numel();
    std::int64_t linear = 0;
    WEFT_CHECK_REPORT(check_output(flat, [&](const std::vector<std::int64_t>&) {
      return Expect{xv[std::size_t((((linear++ - s) % n) + n) % n)]};
    }));
  }
}

TEST_CASE_TEMPLATE("repeat and tile: random repeats, leading new dims, layouts", T, float, double, half, bfloat16,
                   std::int32_t, std::int64_t, bool) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 30; ++iter) {
    const Shape shape = random_shape(rng, 0, 3, 300);
    const TensorView<T> x = make_view<T>(rng, shape, Domain{}, random_layout(rng, false));
    const int rank = shape.rank(), lead = int(rng.integer(0, 2));
    std::vector<std::int64_t> repeats;
    for (int d = 0; d < rank + lead; ++d) repeats.push_back(rng.chance(0.1) ? 0 : rng.integer(1, 3));
    INFO("dtype ", type_name<T>(), ", shape ", shape_str(shape), ", ", repeats.size(), " repeats");
    // reference: out[idx] = x[idx[lead + d] mod n_d]
    auto check = [&](const Tensor<T>& out, int leading) {
      std::vector<std::int64_t> want;
      for (int d = 0; d < rank + leading; ++d) {
        const std::int64_t n = d < leading ? 1 : shape[d - leading];
        want.push_back(repeats[std::size_t(d + lead - leading)] * n);
      }
      REQUIRE(out.shape() == Shape(want));
      return check_output(out, [&](const std::vector<std::int64_t>& idx) {
        std::vector<std::int64_t> at;
        for (int d = 0; d < rank; ++d) at.push_back(idx[std::size_t(leading + d)] % shape[d]);
        return Expect{value_at(x, at)};
      });
    };
    WEFT_CHECK_REPORT(check(weft::repeat(x, repeats), lead));
    // tile with reps shorter than the rank: padded with 1s in front.
    const std::size_t dropped = std::size_t(rng.integer(0, lead + (rank > 0 ? 1 : 0)));
    const std::vector<std::int64_t> reps(repeats.begin() + std::ptrdiff_t(dropped), repeats.end());
    std::vector<std::int64_t> padded(std::size_t(std::max<std::ptrdiff_t>(rank - std::ptrdiff_t(reps.size()), 0)), 1);
    padded.insert(padded.end(), reps.begin(), reps.end());
    const Tensor<T> tiled = weft::tile(x, reps);
    REQUIRE(tiled.dim() == int(padded.size()));
    WEFT_CHECK_REPORT(check_output(tiled, [&](const std::vector<std::int64_t>& idx) {
      std::vector<std::int64_t> at;
      const std::size_t leading = padded.size() - std::size_t(rank);
      for (int d = 0; d < rank; ++d) at.push_back(idx[leading + std::size_t(d)] % shape[d]);
      return Expect{value_at(x, at)};
    }));
  }
}

TEST_CASE("flip, roll, repeat, tile: expression inputs, a large tensor on one and two threads") {
  WEFT_TEST_RNG(rng);
  const int saved_threads = weft::get_num_threads();
  const Tensor<float> a = random_contiguous<float>(rng, Shape{257, 131}, Domain{});
  const Tensor<float> twice = a * 2.0f;
  for (int threads : {1, 2}) {
    weft::set_num_threads(threads);
    INFO("threads ", threads);
    WEFT_CHECK_REPORT(check_flip(weft::flip(a * 2.0f, {0, 1}), TensorView<float>(twice.clone()), {0, 1}));
    WEFT_CHECK_REPORT(check_roll(weft::roll(a.transpose(0, 1), {-500, 3}, {1, 0}),
                                 TensorView<float>(a.clone()).transpose(0, 1), {-500, 3}, {1, 0}));
    const Tensor<float> r = weft::repeat(a, {2, 1, 3});
    CHECK(r.shape() == Shape{2, 257, 393});
    WEFT_CHECK_REPORT(check_output(r, [&](const std::vector<std::int64_t>& idx) {
      return Expect{value_at(a, {idx[1], idx[2] % 131})};
    }));
  }
  weft::set_num_threads(saved_threads);
  // 6 repeated dims of a 5-D permuted view: 12 interleaved dims, more than a Shape holds, so two
  // passes over halves of the repeated dims.
  const TensorView<std::int32_t> x5 = make_view<std::int32_t>(rng, Shape{2, 3, 1, 2, 3}, Domain{-100, 100},
                                                              Layout::permuted_strided);
  const Tensor<std::int32_t> r6 = weft::repeat(x5, {2, 3, 2, 2, 2, 2});
  CHECK(r6.shape() == Shape{2, 6, 6, 2, 4, 6});
  WEFT_CHECK_REPORT(check_output(r6, [&](const std::vector<std::int64_t>& idx) {
    return Expect{value_at(x5, {idx[1] % 2, idx[2] % 3, 0, idx[4] % 2, idx[5] % 3})};
  }));
  const Tensor<float> scalar = weft::full<float>(Shape{}, 3.5f);
  CHECK(weft::flip(scalar, std::vector<std::int64_t>{}).item() == 3.5f);
  CHECK(weft::repeat(scalar, {2, 2}).shape() == Shape{2, 2});
}

TEST_CASE("flip, roll, repeat, tile: errors name the op, the shapes and the fix") {
  const Tensor<float> x = weft::ones<float>(Shape{2, 3, 4});
  std::string m = error_of([&] { weft::flip(x, {3}); });
  CHECK(has(m, "flip"));
  CHECK(has(m, "dim 3 is out of range for an input of shape [2, 3, 4]"));
  m = error_of([&] { weft::flip(x, {1, -2}); });
  CHECK(has(m, "flip: dim 1 appears more than once"));
  m = error_of([&] { weft::roll(x, {1, 2}, {0}); });
  CHECK(has(m, "roll: got 2 shifts but 1 dims"));
  m = error_of([&] { weft::roll(x, {1, 2}, {2, -1}); });
  CHECK(has(m, "roll: dim 2 appears more than once"));
  m = error_of([&] { weft::roll(x, 1, -4); });
  CHECK(has(m, "roll: dim -4 is out of range"));
  m = error_of([&] { weft::repeat(x, {2, 2}); });
  CHECK(has(m, "repeat: got 2 repeats for an input of shape [2, 3, 4]; give one per dim (3)"));
  m = error_of([&] { weft::repeat(x, {1, -1, 1}); });
  CHECK(has(m, "repeat: repeat -1 at position 1 is negative"));
  m = error_of([&] { weft::tile(x, {2, 2, 2, 2, 2, 2, 2, 2, 2}); });
  CHECK(has(m, "tile: got 9 repeats; weft's shapes hold at most 8 dims"));
}

}  // TEST_SUITE

// SPDX-License-Identifier: MIT
/// @file cpu: cat and stack against a reference read element by element from the operands (random
/// shapes, dims and layouts, every dtype, empty operands, every overload), split and chunk as views
/// (torch's piece sizes, shared elements, constness), and every error.
#include <type_traits>

#include <weft/ops/join.hpp>
#include <weft/backend/threads.hpp>

#include "dense_reference.hpp"
#include "error_check.hpp"
#include "reference.hpp"

using namespace weft_test;
using weft::Device;

namespace {

/// cat's output at idx: operand k's element at idx with dim's coordinate shifted into k's range.
/// Plain loops over the index arithmetic, with the operands' values read from raw storage.
template <class T>
Report check_cat(const Tensor<T>& out, const std::vector<TensorView<T>>& xs, int dim) {
  return check_output(out, [&](const std::vector<std::int64_t>& idx) {
    std::vector<std::int64_t> at = idx;
    std::size_t k = 0;
    while (at[std::size_t(dim)] >= xs[k].shape()[dim]) at[std::size_t(dim)] -= xs[k++].shape()[dim];
    return Expect{value_at(xs[k], at)};
  });
}

/// K operands whose shapes equal `shape` except at dim (random extents, some 0), in random layouts.
template <class T>
std::vector<TensorView<T>> random_operands(Rng& rng, const Shape& shape, int dim, int k) {
  std::vector<TensorView<T>> xs;
  for (int i = 0; i < k; ++i) {
    Shape s = shape;
    s[dim] = rng.chance(0.15) ? 0 : rng.integer(1, 9);
    xs.push_back(make_view<T>(rng, s, Domain{}, random_layout(rng, false)));
  }
  return xs;
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE_TEMPLATE("cat: random shapes, dims, layouts and operand counts", T, float, double, half, bfloat16,
                   std::int32_t, std::int64_t, bool) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 40; ++iter) {
    const Shape shape = random_shape(rng, 1, 4, 600);
    const auto random = random_dim(rng, shape.rank());
    const std::int64_t d = random.dim;
    const int dim = random.wrapped;
    const std::vector<TensorView<T>> xs = random_operands<T>(rng, shape, dim, int(rng.integer(1, 4)));
    INFO("dtype ", type_name<T>(), ", base shape ", shape_str(shape), ", dim ", d, ", operands ", xs.size());
    const Tensor<T> out = weft::cat(xs, d);
    Shape want = shape;
    want[dim] = 0;
    for (const auto& x : xs) want[dim] += x.shape()[dim];
    REQUIRE(out.shape() == want);
    WEFT_CHECK_REPORT(check_cat(out, xs, dim));
  }
}

TEST_CASE_TEMPLATE("stack: random shapes, dims and layouts", T, float, half, std::int64_t, bool) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 30; ++iter) {
    const Shape shape = random_shape(rng, 0, 4, 500);
    const auto random = random_dim(rng, shape.rank() + 1);
    const std::int64_t d = random.dim;
    const int dim = random.wrapped;
    std::vector<TensorView<T>> xs;
    for (int k = int(rng.integer(1, 4)); k > 0; --k)
      xs.push_back(make_view<T>(rng, shape, Domain{}, random_layout(rng, false)));
    INFO("dtype ", type_name<T>(), ", shape ", shape_str(shape), ", dim ", d, ", operands ", xs.size());
    const Tensor<T> out = weft::stack(xs, d);
    Shape want = shape;
    want.insert(dim, std::int64_t(xs.size()));
    REQUIRE(out.shape() == want);
    WEFT_CHECK_REPORT(check_output(out, [&](const std::vector<std::int64_t>& idx) {
      std::vector<std::int64_t> at = idx;
      at.erase(at.begin() + dim);
      return Expect{value_at(xs[std::size_t(idx[std::size_t(dim)])], at)};
    }));
  }
}

TEST_CASE("cat: every overload, large operands on one and two threads, strided runs") {
  WEFT_TEST_RNG(rng);
  const int saved_threads = weft::get_num_threads();
  Tensor<float> a = random_contiguous<float>(rng, Shape{300, 70}, Domain{});
  const Tensor<float> b = random_contiguous<float>(rng, Shape{300, 50}, Domain{});
  const TensorView<float> c = make_view<float>(rng, Shape{300, 90}, Domain{}, Layout::permuted_strided);
  const std::vector<TensorView<float>> xs{a, b.clone(), c};
  for (int threads : {1, 2}) {
    weft::set_num_threads(threads);
    INFO("threads ", threads);
    const Tensor<float> out = weft::cat({a, b, c}, 1);  // a braced list of tensors and a view
    WEFT_CHECK_REPORT(check_cat(out, xs, 1));
    const std::vector<Tensor<float>> tensors{a, b};
    WEFT_CHECK_REPORT(check_cat(weft::cat(tensors, -1), {a, b.clone()}, 1));
    WEFT_CHECK_REPORT(check_cat(weft::cat(xs, 1), xs, 1));
    const std::vector<TensorView<const float>> views{a, b, c};
    WEFT_CHECK_REPORT(check_cat(weft::cat(views, 1), xs, 1));
    // Along dim 0 each operand is one long run per output (a memcpy split between the threads).
    const std::vector<TensorView<float>> rows{a.transpose(0, 1), c.transpose(0, 1)};
    WEFT_CHECK_REPORT(check_cat(weft::cat(rows, 0), rows, 0));
    const Tensor<float> stacked = weft::stack({a, a}, 0);
    CHECK(stacked.shape() == Shape{2, 300, 70});
  }
  weft::set_num_threads(saved_threads);
}

TEST_CASE("cat and stack: empty operands and outputs") {
  const Tensor<float> a = weft::ones<float>(Shape{2, 0, 3}), b = weft::ones<float>(Shape{2, 4, 3});
  CHECK(weft::cat({a, b, a}, 1).shape() == Shape{2, 4, 3});
  CHECK(weft::cat({a, a}, 1).shape() == Shape{2, 0, 3});
  CHECK(weft::cat({a, a}, 0).shape() == Shape{4, 0, 3});
  CHECK(weft::stack({a, a, a}, 2).shape() == Shape{2, 0, 3, 3});
  // Zero-dimensional operands stack into a vector.
  const Tensor<int> s = weft::stack({weft::full<int>(Shape{}, 3), weft::full<int>(Shape{}, 5)}, -1);
  CHECK(s.to_vector() == std::vector<int>{3, 5});
}

TEST_CASE("split and chunk: torch's pieces, views of the same elements, constness") {
  Tensor<float> x = weft::arange<float>(30).reshape(Shape{5, 6}).clone();
  auto pieces = weft::split(x, 2);
  static_assert(std::is_same_v<decltype(pieces), std::vector<TensorView<float>>>);
  REQUIRE(pieces.size() == 3);
  CHECK(pieces[2].shape() == Shape{1, 6});
  CHECK(pieces[1].data() == x.data() + 12);  // views: no element copied
  pieces[2] = 7.0f;                          // written through to x
  CHECK(x.to_vector()[29] == 7.0f);

  const Tensor<float>& cx = x;
  auto cols = weft::split(cx, std::vector<std::int64_t>{1, 0, 5}, -1);
  static_assert(std::is_same_v<decltype(cols), std::vector<TensorView<const float>>>);
  REQUIRE(cols.size() == 3);
  CHECK(cols[1].shape() == Shape{5, 0});
  CHECK(cols[2].shape() == Shape{5, 5});
  CHECK(cols[2].data() == x.data() + 1);
  CHECK(cols[2].strides() == weft::Strides{6, 1});
  CHECK(weft::split(x.view(), {2, 3}, 0).size() == 2);

  // torch.chunk: ceil-sized pieces, possibly fewer than asked (6 into 4 chunks: 2, 2, 2).
  auto sizes = [](const auto& ps, int d) {
    std::vector<std::int64_t> s;
    for (const auto& p : ps) s.push_back(p.shape()[d]);
    return s;
  };
  CHECK(sizes(weft::chunk(x, 4, 1), 1) == std::vector<std::int64_t>{2, 2, 2});
  CHECK(sizes(weft::chunk(x, 2, 0), 0) == std::vector<std::int64_t>{3, 2});
  CHECK(sizes(weft::chunk(x, 10, 0), 0) == std::vector<std::int64_t>{1, 1, 1, 1, 1});
  CHECK(sizes(weft::split(x, 4, 1), 1) == std::vector<std::int64_t>{4, 2});
  CHECK(sizes(weft::split(x, 9, 1), 1) == std::vector<std::int64_t>{6});
  const Tensor<float> empty = weft::zeros<float>(Shape{0, 3});
  CHECK(sizes(weft::chunk(empty, 3), 0) == std::vector<std::int64_t>{0, 0, 0});
  CHECK(sizes(weft::split(empty, 2), 0) == std::vector<std::int64_t>{0});
  CHECK(sizes(weft::split(empty, 0), 0) == std::vector<std::int64_t>{0});
  // A temporary's pieces keep its elements alive.
  auto kept = weft::chunk(weft::arange<float>(4), 2);
  CHECK(kept[1].to_vector() == std::vector<float>{2, 3});
  // cat of a tensor's pieces gives it back.
  CHECK(weft::cat(weft::chunk(x, 3, 1), 1).to_vector() == x.to_vector());
}

TEST_CASE("cat, stack, split, chunk: errors name the op, the operands, the shapes and the fix") {
  const Tensor<float> a = weft::zeros<float>(Shape{2, 3}), b = weft::zeros<float>(Shape{2, 4}),
                      c = weft::zeros<float>(Shape{2, 3, 1});
  std::string m = error_of([&] { weft::cat(std::vector<Tensor<float>>{}, 0); });
  CHECK(has(m, "weft::cat"));
  CHECK(has(m, "empty list"));
  m = error_of([&] { weft::stack(std::vector<TensorView<const float>>{}, 0); });
  CHECK(has(m, "weft::stack"));
  CHECK(has(m, "empty list"));
  m = error_of([&] { weft::cat({a, b}, 0); });
  CHECK(has(m, "operand 1 has shape [2, 4]"));
  CHECK(has(m, "operand 0 has shape [2, 3]"));
  CHECK(has(m, "differ in dim 1 (4 vs 3)"));
  m = error_of([&] { weft::cat({a, a, c}, 1); });
  CHECK(has(m, "operand 2 has shape [2, 3, 1] of rank 3"));
  CHECK(has(m, "same rank"));
  m = error_of([&] { weft::stack({a, a, b}, 0); });
  CHECK(has(m, "weft::stack"));
  CHECK(has(m, "operand 2 has shape [2, 4]"));
  CHECK(has(m, "equal shapes"));
  m = error_of([&] { weft::cat({a, b}, 2); });
  CHECK(has(m, "dim 2 is out of range"));
  CHECK(has(m, "[2, 3]"));
  m = error_of([&] { weft::cat({a, b}, -3); });
  CHECK(has(m, "dim -3 is out of range"));
  m = error_of([&] { weft::stack({a, a}, 3); });
  CHECK(has(m, "dim 3 is out of range"));
  CHECK(has(m, "from -3 to 2"));
  m = error_of([&] { weft::cat({weft::zeros<float>(Shape{}), weft::zeros<float>(Shape{})}, 0); });
  CHECK(has(m, "zero-dimensional"));
  m = error_of([&] { weft::cat({a, Tensor<float>()}, 0); });
  CHECK(has(m, "operand 1 is an empty"));
  m = error_of([&] { weft::cat({a.view(), fake_cuda_view<float>(Shape{2, 3})}, 0); });
  CHECK(has(m, "operand 1 (shape [2, 3]) is on cuda:0"));
  CHECK(has(m, "operand 0 (shape [2, 3]) is on cpu"));
  m = error_of([&] { weft::cat({fake_cuda_view<float>(Shape{2, 3})}, 0); });
  CHECK(has(m, "weft::cat"));
  CHECK(has(m, "nvcc"));

  m = error_of([&] { weft::split(a, {1, 1}, 1); });
  CHECK(has(m, "weft::split"));
  CHECK(has(m, "sizes [1, 1] sum to 2"));
  CHECK(has(m, "dim 1 of shape [2, 3] has 3"));
  m = error_of([&] { weft::split(a, {4, -1}, 1); });
  CHECK(has(m, "negative"));
  m = error_of([&] { weft::split(a, 0, 1); });
  CHECK(has(m, "split_size must be positive, got 0"));
  m = error_of([&] { weft::split(a, 1, 2); });
  CHECK(has(m, "dim 2 is out of range"));
  m = error_of([&] { weft::chunk(a, 0, 1); });
  CHECK(has(m, "weft::chunk"));
  CHECK(has(m, "chunks must be positive, got 0"));
  m = error_of([&] { weft::chunk(weft::zeros<float>(Shape{}), 2); });
  CHECK(has(m, "zero-dimensional"));
}

}  // TEST_SUITE

// SPDX-License-Identifier: MIT
/// @file core: tensors are values, views are handles. A Tensor copies its elements and, after
/// `y = rhs`, equals rhs; a view shares elements, keeps them alive and writes through on
/// assignment; a list holds views; a destination's dtype follows torch.can_cast.
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "error_check.hpp"
#include "reference.hpp"

using namespace weft_test;
using weft::TensorList;

namespace {

std::int64_t copies() { return weft::detail::tensor_counters().copies.load(); }

// What may be written into what, at compile time (the one-line static_assert fires inside the
// assignment, so these look at the rule itself and at the const-view refusal).
static_assert(weft::can_cast_v<float, double> && weft::can_cast_v<double, weft::half>);
static_assert(weft::can_cast_v<std::int64_t, float> && weft::can_cast_v<bool, std::int32_t>);
static_assert(!weft::can_cast_v<float, std::int32_t> && !weft::can_cast_v<weft::bfloat16, std::int64_t>);
static_assert(!weft::can_cast_v<std::int32_t, bool> && !weft::can_cast_v<double, bool>);
// A view of a const tensor is read-only: its elements are const, and it does not convert back.
static_assert(std::is_same_v<decltype(std::declval<const Tensor<float>&>().slice(0, 0, 1)), TensorView<const float>>);
static_assert(std::is_same_v<decltype(std::declval<Tensor<float>&>().slice(0, 0, 1)), TensorView<float>>);
static_assert(std::is_same_v<decltype(std::declval<TensorView<const float>&>().data()), const float*>);
static_assert(!std::is_constructible_v<TensorView<float>, const weft::TensorBase<float>&>);
static_assert(!std::is_constructible_v<TensorView<float>, TensorView<const float>>);
static_assert(std::is_convertible_v<Tensor<float>&, TensorView<float>>);
static_assert(std::is_convertible_v<TensorView<float>, TensorView<const float>>);
static_assert(std::is_nothrow_move_constructible_v<Tensor<float>> && std::is_nothrow_move_assignable_v<Tensor<float>>);

}  // namespace

TEST_SUITE("core") {

TEST_CASE("semantics: copying a Tensor copies its elements; moving is O(1)") {
  WEFT_TEST_RNG(rng);
  Tensor<float> x = random_contiguous<float>(rng, Shape{3, 4}, Domain{1, 2});
  const std::vector<double> x0 = values_of(x);

  const std::int64_t before = copies();
  Tensor<float> copy = x;
  CHECK(copies() == before + 1);
  CHECK(copy.storage() != x.storage());
  CHECK(values_of(copy) == x0);
  x = 5.0;
  CHECK(values_of(copy) == x0);  // the copy is its own

  Tensor<float> moved = std::move(copy);
  CHECK(copies() == before + 1);  // no element copied
  CHECK(!copy.defined());         // NOLINT(bugprone-use-after-move): a moved-from tensor is empty
  CHECK(values_of(moved) == x0);
  float* p = x.data();
  moved = std::move(x);  // move assignment takes the elements, whatever moved held
  CHECK(moved.data() == p);

  // Self-assignment is harmless.
  Tensor<float>& alias = moved;
  moved = alias;
  CHECK(values_of(moved) == std::vector<double>(12, 5.0));
}

TEST_CASE("semantics: after y = rhs, y equals rhs (in place when the shape fits, else reallocated)") {
  WEFT_TEST_RNG(rng);
  Tensor<double> y = random_contiguous<double>(rng, Shape{3, 4}, Domain{});
  double* same = y.data();
  const Tensor<double> a = random_contiguous<double>(rng, Shape{3, 4}, Domain{}), row = random_contiguous<double>(rng, Shape{4}, Domain{});
  y = a * 2.0;  // same shape: written in place
  CHECK(y.data() == same);
  CHECK(values_of(y) == values_of(weft::eval(a * 2.0)));

  const TensorView<double> old_view = y.view();
  y = row;  // another shape: y becomes rhs, old views keep the old elements
  CHECK(y.shape() == Shape{4});
  CHECK(values_of(y) == values_of(row));
  CHECK(old_view.shape() == Shape{3, 4});
  CHECK(values_of(old_view) == values_of(weft::eval(a * 2.0)));

  y = 7;  // a number has no shape: it fills the tensor as it is
  CHECK(y.shape() == Shape{4});
  CHECK(values_of(y) == std::vector<double>(4, 7.0));

  // Compound assignments write in place and broadcast to the tensor.
  Tensor<double> m = weft::zeros<double>(Shape{3, 4});
  m += row;
  CHECK(m.shape() == Shape{3, 4});
  const std::vector<double> rv = values_of(row), mv = values_of(m);
  for (std::size_t i = 0; i < 12; ++i) CHECK(mv[i] == rv[i % 4]);
  CHECK(has(error_of([&] { Tensor<double> r = row; r += m; }), "broadcast"));

  // A number into an empty tensor makes a 0-dim tensor.
  Tensor<float> s;
  s = 2.5;
  CHECK(s.dim() == 0);
  CHECK(s.item() == 2.5f);
}

TEST_CASE("semantics: the four surprises of a handle-like Tensor are gone") {
  WEFT_TEST_RNG(rng);
  const Tensor<float> a = random_contiguous<float>(rng, Shape{4, 3}, Domain{});
  const Tensor<float> b = random_contiguous<float>(rng, Shape{4, 3}, Domain{});

  // 1. Copy-initialization from an expression evaluates it.
  Tensor<float> y = a + b;
  const std::vector<double> av = values_of(a), bv = values_of(b), yv = values_of(y);
  for (std::size_t i = 0; i < yv.size(); ++i) CHECK(yv[i] == double(float(av[i]) + float(bv[i])));

  // 2. A saved copy does not change when the original does.
  Tensor<float> x = a;
  auto saved = x;
  x = x * 2;
  CHECK(values_of(saved) == av);
  CHECK(values_of(x) != av);

  // 3. x = matmul(x, w) changes x's shape.
  const Tensor<float> w = random_contiguous<float>(rng, Shape{3, 5}, Domain{});
  x = weft::matmul(x, w);
  CHECK(x.shape() == Shape{4, 5});

  // 4. A vector of tensors assigns values, and its tensors alias nothing.
  std::vector<Tensor<float>> first{a, b};
  std::vector<Tensor<float>> second{b, a};
  second = first;
  first[0] = 0;
  CHECK(values_of(second[0]) == av);
  CHECK(second[0].storage() != first[0].storage());
}

TEST_CASE("semantics: assigning to a view writes its elements and never changes its shape") {
  WEFT_TEST_RNG(rng);
  Tensor<float> t = weft::zeros<float>(Shape{3, 4});
  const Tensor<float> bias = random_contiguous<float>(rng, Shape{4}, Domain{});
  t.slice(0, 0, 2) = bias;  // broadcasts over the two rows
  const std::vector<double> tv = values_of(t), bv = values_of(bias);
  for (std::size_t i = 0; i < 12; ++i) CHECK(tv[i] == (i < 8 ? bv[i % 4] : 0.0));
  TensorView<float> col = t.select(1, 3);
  col = 9;
  CHECK(value_at(t, {2, 3}) == 9.0);
  CHECK(col.shape() == Shape{3});
  CHECK(has(error_of([&] { col = weft::zeros<float>(Shape{4}); }), "broadcast"));

  // A copy of a view is another handle to the same elements.
  TensorView<float> handle = col;
  handle += 1;
  CHECK(value_at(t, {0, 3}) == 10.0);

  // A view keeps its storage alive after the tensor is gone.
  std::weak_ptr<weft::Storage> storage;
  std::optional<TensorView<const float>> kept;
  {
    Tensor<float> owner = random_contiguous<float>(rng, Shape{2, 5}, Domain{});
    storage = owner.storage();
    kept.emplace(owner.transpose(0, 1));
    CHECK(storage.use_count() == 2);
  }
  CHECK(!storage.expired());
  CHECK(kept->shape() == Shape{5, 2});
  const std::vector<double> kv = values_of(*kept);
  kept.reset();
  CHECK(storage.expired());
  CHECK(kv.size() == 10);

  // A view of a temporary keeps the temporary's elements.
  TensorView<const float> of_temporary = weft::full<float>(Shape{3}, 4.0f);
  CHECK(values_of(of_temporary) == std::vector<double>(3, 4.0));

  // Evaluating a view into a Tensor copies (contiguous).
  Tensor<float> from_view(t.transpose(0, 1));  // explicit: a view never becomes a copy unasked
  CHECK(from_view.is_contiguous());
  CHECK(from_view.shape() == Shape{4, 3});
  CHECK(value_at(from_view, {3, 2}) == 10.0);
}

TEST_CASE("semantics: a TensorList holds views of the tensors it was built from") {
  std::vector<Tensor<float>> tensors{weft::zeros<float>(Shape{2}), weft::zeros<float>(Shape{3, 2})};
  TensorList<float> list(tensors);
  list = list + 1.5f;
  CHECK(values_of(tensors[0]) == std::vector<double>(2, 1.5));
  CHECK(values_of(tensors[1]) == std::vector<double>(6, 1.5));
  list[1] = 2;  // list[i] is a view of tensor i
  CHECK(values_of(tensors[1]) == std::vector<double>(6, 2.0));
  static_assert(std::is_same_v<decltype(list[0]), TensorView<float>&>);
}

TEST_CASE("semantics: destinations hold what torch.can_cast allows; explicit casts convert") {
  // float -> int32 truncates toward zero (C++ and PyTorch's .to(int))
  Tensor<std::int32_t> yi = weft::zeros<std::int32_t>(Shape{4});
  yi = weft::cast<std::int32_t>(weft::from_vector<float>({1.9f, -1.9f, 0.5f, -0.5f}));
  CHECK(values_of(yi) == std::vector<double>{1, -1, 0, 0});
  // anything -> bool tests != 0
  Tensor<bool> yb = weft::cast<bool>(weft::from_vector<float>({0.0f, -0.0f, 0.25f, -3.0f}));
  CHECK(values_of(yb) == std::vector<double>{0, 0, 1, 1});
  // double -> half rounds to nearest even (same kind: no cast needed)
  Tensor<half> yh = weft::zeros<half>(Shape{2});
  yh = weft::from_vector<double>({1.0 + 0x1p-11, 1.0 + 3 * 0x1p-11});
  CHECK(values_of(yh) == std::vector<double>{1.0, 1.0 + 0x1p-9});
  // int and bool into float
  Tensor<float> yf(weft::from_vector<std::int64_t>({3, -4}));
  yf += weft::from_vector<bool>({true, false});
  CHECK(values_of(yf) == std::vector<double>{4, -4});
}

}  // TEST_SUITE

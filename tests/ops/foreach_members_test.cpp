// SPDX-License-Identifier: MIT
/// @file A TensorList's member table (core/list_members.hpp) and the memo of passed checks: kept in step with push_back, never standing in for a check that a changed call needs.
#include "error_check.hpp"
#include "list_reference.hpp"

#include <string>
#include <vector>

using namespace weft_test;

TEST_SUITE("cpu") {

namespace {

/// Values of y = x * 0.5 + x * x for every element of x.
std::vector<std::vector<double>> half_plus_square(const std::vector<std::vector<double>>& x) {
  std::vector<std::vector<double>> y = x;
  for (auto& t : y)
    for (double& v : t) v = v * 0.5 + v * v;
  return y;
}

/// A list of poisoned new tensors of these shapes.
TensorList<float> poisoned_list(const std::vector<Shape>& shapes) {
  TensorList<float> out;
  for (const Shape& s : shapes) {
    out.push_back(weft::empty<float>(s));
    poison(out[out.size() - 1]);
  }
  return out;
}

void append_poisoned(TensorList<float>& list, const Shape& shape) {
  list.push_back(weft::empty<float>(shape));
  poison(list[list.size() - 1]);
}

/// Float products and a sum, each rounded once: within 3 ulps of max(|x/2|, |x^2|) <= 2 for |x| <= 1.
constexpr double kUlps = 3;

}  // namespace

TEST_CASE("foreach: a list's member table follows its views, push_back and copies of the handle") {
  WEFT_TEST_RNG(rng);
  for (std::size_t length : kLengths) {
    CAPTURE(length);
    const std::vector<Shape> shapes = member_shapes(rng, length);
    TensorList<float> list = random_list<float>(rng, shapes, -1, 1);
    auto table_matches = [](const TensorList<float>& l) {
      const weft::detail::ListMembers& m = l.member_table();
      REQUIRE(m.size() == l.size());
      REQUIRE(m.start.size() == l.size() + 1);
      std::int64_t elements = 0;
      for (std::size_t k = 0; k < l.size(); ++k) {
        const std::int64_t n = l[k].defined() ? l[k].numel() : 0;  // an empty view holds no elements
        CHECK(m.data[k] == static_cast<void*>(l[k].data()));
        CHECK(m.start[k + 1] - m.start[k] == n);
        elements += n;
      }
      CHECK(l.numel() == elements);
    };
    table_matches(list);
    TensorList<float> copy = list;  // a handle: both name one list
    auto buffer = weft::zeros<float>({40});
    copy.push_back(buffer.view().narrow(0, 3, 17));  // a contiguous view at an offset
    copy.push_back(weft::TensorView<float>());             // an empty view: no elements, no address
    CHECK(list.size() == length + 2);
    CHECK(&list.member_table() == &copy.member_table());
    table_matches(list);
    CHECK(list.member_table().data[length] == static_cast<void*>(buffer.data() + 3));
    CHECK(list.member_table().data[length + 1] == nullptr);
  }
}

TEST_CASE("foreach: calls repeated over the same lists, and after push_back, write every element") {
  WEFT_TEST_RNG(rng);
  for (std::size_t length : kLengths) {
    CAPTURE(length);
    const std::vector<Shape> shapes = member_shapes(rng, length);
    TensorList<float> x = random_list<float>(rng, shapes, -1, 1);
    TensorList<float> y = poisoned_list(shapes);
    for (int call = 0; call < 3; ++call) {
      CAPTURE(call);
      for (auto& t : y) poison(t);
      y = x * 0.5f + x * x;
      check_list(y, half_plus_square(values_of_list(x)), kUlps, 1.0);
    }
    // Members of every kind appended to both: empty, small, one that splits across threads.
    for (const Shape& s : {Shape{0}, Shape{5}, Shape{100}, Shape{40000}, Shape{3, 7}}) {
      x.push_back(random_tensor<float>(rng, s, -1, 1));
      append_poisoned(y, s);
    }
    y = x * 0.5f + x * x;
    check_list(y, half_plus_square(values_of_list(x)), kUlps, 1.0);
  }
}

TEST_CASE("foreach: members that are views of one buffer at offsets, in mixed sizes with empty ones") {
  WEFT_TEST_RNG(rng);
  const std::vector<std::int64_t> sizes = {0, 100, 1, 0, 17, 16, 33, 20000, 0, 3, 257, 30000, 0};
  std::int64_t total = 0;
  for (std::int64_t n : sizes) total += n;
  auto xs = random_tensor<float>(rng, Shape{total}, -1, 1);
  auto ys = weft::empty<float>({total});
  poison(ys);
  TensorList<float> x, y;
  std::int64_t at = 0;
  for (std::int64_t n : sizes) {
    x.push_back(xs.view().narrow(0, at, n));
    y.push_back(ys.view().narrow(0, at, n));
    at += n;
  }
  for (int call = 0; call < 2; ++call) {
    y = x * 0.5f + x * x;
    check_list(y, half_plus_square(values_of_list(x)), kUlps, 1.0);
  }
}

TEST_CASE("foreach: a check passed before does not hide what a changed call gets wrong") {
  WEFT_TEST_RNG(rng);
  TensorList<float> x = random_list<float>(rng, {Shape{3}, Shape{4}}, -1, 1);
  TensorList<float> y = random_list<float>(rng, {Shape{3}, Shape{4}}, -1, 1);
  y = x + 1.0f;  // passes: the memo of y holds (y, x) at length 2
  auto expect_error = [&](const TensorList<float>& out, auto&& f, const std::vector<std::string>& words) {
    const auto before = values_of_list(out);
    const std::string what = error_of(f);
    INFO(what);
    for (const auto& w : words) CHECK(has(what, w));
    check_list(out, before, 0, 0);  // nothing written
  };

  SUBCASE("members appended with different shapes") {
    x.push_back(random_tensor<float>(rng, Shape{5}, -1, 1));
    y.push_back(random_tensor<float>(rng, Shape{6}, -1, 1));
    expect_error(y, [&] { y = x + 1.0f; }, {"tensor 2", "[6]", "[5]"});
  }
  SUBCASE("a strided member appended") {
    auto wide = weft::rand<float>({5, 4}, 1);
    x.push_back(wide.select(1, 0));  // stride 4
    y.push_back(random_tensor<float>(rng, Shape{5}, -1, 1));
    expect_error(y, [&] { y = x + 1.0f; }, {"tensor 2", "contiguous"});
  }
  SUBCASE("another input list overlapping the output: as the same tensor, then partly") {
    // Output members that are views of one buffer, so that an input can overlap one partly.
    auto buffer = weft::zeros<float>({8});
    TensorList<float> out({buffer.view().narrow(0, 0, 3), buffer.view().narrow(0, 3, 4)});
    out = x + 1.0f;
    TensorList<float> itself({buffer.view().narrow(0, 0, 3), x[1]});  // out[0] itself: allowed
    out = itself * 2.0f;
    TensorList<float> shifted({buffer.view().narrow(0, 1, 3), x[1]});  // out[0] moved by one element
    expect_error(out, [&] { out = shifted * 2.0f; }, {"input tensor 0 overlaps output tensor 0"});
  }
  SUBCASE("a second output overlapping the first, after the same first output passed with another") {
    TensorList<float> w = random_list<float>(rng, {Shape{3}, Shape{4}}, -1, 1);
    weft::fuse(weft::assign(y, x + 1.0f), weft::assign(w, x * 2.0f));
    TensorList<float> aliased({w[0], y[1]});
    expect_error(y, [&] { weft::fuse(weft::assign(y, x + 1.0f), weft::assign(aliased, x * 2.0f)); },
                 {"outputs 0 and 1 overlap at tensor 1"});
  }
  SUBCASE("more calls writing one list than the memo holds, then a wrong one") {
    std::vector<TensorList<float>> inputs;
    for (int i = 0; i < 6; ++i) inputs.push_back(random_list<float>(rng, {Shape{3}, Shape{4}}, -1, 1));
    for (int round = 0; round < 2; ++round)
      for (const auto& in : inputs) {
        for (auto& t : y) poison(t);
        y = in * 0.5f + in * in;
        check_list(y, half_plus_square(values_of_list(in)), kUlps, 1.0);
      }
    TensorList<float> wrong = random_list<float>(rng, {Shape{3}, Shape{2, 2}}, -1, 1);
    expect_error(y, [&] { y = wrong + 1.0f; }, {"tensor 1", "[4]", "[2, 2]"});
  }
}

TEST_CASE("foreach: a listed tensor reassigned after listing: the list keeps the elements it viewed") {
  WEFT_TEST_RNG(rng);
  std::vector<Tensor<float>> ts;
  for (const Shape& s : {Shape{3}, Shape{100}, Shape{4, 5}}) ts.push_back(random_tensor<float>(rng, s, -1, 1));
  TensorList<float> list(ts);
  auto want = values_of_list(list);
  list = list * 2.0f;
  for (auto& t : want)
    for (double& v : t) v *= 2;
  check_list(list, want, 0, 0);

  // A new shape: ts[0] gets new elements; the list still views the old ones, which it writes.
  ts[0] = weft::zeros<float>({7});
  // The same shape: written in place, so the list sees the new values.
  const Tensor<float> fresh = random_tensor<float>(rng, Shape{100}, -1, 1);
  ts[1] = fresh;
  want[1] = values_of(fresh);
  list = list * 2.0f;
  for (auto& t : want)
    for (double& v : t) v *= 2;
  check_list(list, want, 0, 0);
  CHECK(list[0].shape() == Shape{3});
  CHECK(values_of(ts[0]) == std::vector<double>(7, 0.0));
  CHECK(values_of(ts[1]) == want[1]);
}

}  // TEST_SUITE

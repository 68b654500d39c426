// SPDX-License-Identifier: MIT
/// @file Foreach fuse: mixed dtypes, ScalarLists, shared subexpressions, single tensors, errors and logs.
#include "list_reference.hpp"

#include <string>
#include <vector>

using namespace weft_test;

TEST_SUITE("cpu") {
// Mixed dtypes in one kernel: bf16 parameters, float32 state, half gradients, per-tensor lr.
TEST_CASE("foreach: mixed dtypes and a ScalarList in one fused AdamW-shaped update") {
  WEFT_TEST_RNG(rng);
  const std::size_t length = 37;
  std::vector<Shape> shapes;
  for (std::size_t k = 0; k < length; ++k) shapes.push_back(member_shape(rng, length));
  auto p = random_list<weft::bfloat16>(rng, shapes, -1, 1);
  auto g = random_list<weft::half>(rng, shapes, -1, 1);
  auto m = random_list<float>(rng, shapes, -0.1, 0.1);
  auto v = random_list<float>(rng, shapes, 0.0, 0.01);
  std::vector<double> lrs;
  for (std::size_t k = 0; k < length; ++k) lrs.push_back(rng.uniform(1e-3, 1e-2));
  ScalarList<double> lr(lrs);
  const double b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.01;
  auto pv = values_of_list(p), gv = values_of_list(g), mv = values_of_list(m), vv = values_of_list(v);

  auto m1 = b1 * m + (1 - b1) * g;
  auto v1 = b2 * v + (1 - b2) * g * g;
  weft::fuse(weft::assign(m, m1), weft::assign(v, v1),
             weft::assign(p, p - wd * (lr * p) - lr * m1 / (weft::sqrt(v1) + eps)));

  std::vector<std::vector<double>> p_terms(length);  // |p (1 - lr wd)| + |lr m1 / (sqrt(v1) + eps)|
  for (std::size_t k = 0; k < length; ++k)
    for (std::size_t i = 0; i < pv[k].size(); ++i) {
      double mm = b1 * mv[k][i] + (1 - b1) * gv[k][i];
      double vv1 = b2 * vv[k][i] + (1 - b2) * gv[k][i] * gv[k][i];
      mv[k][i] = mm;
      vv[k][i] = vv1;
      const double decayed = pv[k][i] * (1 - lrs[k] * wd), step = lrs[k] * mm / (std::sqrt(vv1) + eps);
      pv[k][i] = decayed - step;
      p_terms[k].push_back(std::fabs(decayed) + std::fabs(step));
    }
  // float state: a handful of float roundings (of b1, 1-b1, the products and the sum), each at most
  // half an ulp of the largest term: |b1 m| + |(1-b1) g| <= 0.2 for m, |b2 v| + |(1-b2) g^2| <= 0.011
  // for v. The results cancel to far smaller values, so the bound is in ulps of the terms (8 is ~2x
  // the count of roundings).
  check_list(m, mv, 8, 0.2);
  check_list(v, vv, 8, 0.011);
  // bf16 output: one bf16 rounding (1 ulp, plus slack for a tie) of a value computed in float. The
  // float error scales with the update's terms, not its result, which can cancel to ~1e-8 (where a
  // bf16 ulp is ~2e-10) from terms of ~1: a handful of float roundings of the terms (the products,
  // m1 and v1 as float, the sqrt and division), 8 ulps of float at |p (1 - lr wd)| + |lr m1 / ...|.
  check_list_within(p, pv, [&](std::size_t k, std::size_t i) {
    return 1.01 * ulp_of<weft::bfloat16>(std::fabs(pv[k][i])) + 8 * ulp_of<float>(p_terms[k][i]);
  });
}

// Each statement reads the values from before the kernel, and a named subexpression is computed
// once per element: its pseudo-source has one `t0 = ...` line.
TEST_CASE("foreach: fuse swaps two lists and shares a named subexpression") {
  WEFT_TEST_RNG(rng);
  std::vector<Shape> shapes = {Shape{5}, Shape{0}, Shape{16, 3}, Shape{1}};
  auto a = random_list<float>(rng, shapes, -1, 1), b = random_list<float>(rng, shapes, -1, 1);
  auto av = values_of_list(a), bv = values_of_list(b);
  weft::fuse(weft::assign(a, b), weft::assign(b, a));
  check_list(a, bv, 0, 0);
  check_list(b, av, 0, 0);
}

// A single tensor with one element (a number kept with the data) broadcasts to every list member.
TEST_CASE("foreach: a one-element tensor and numbers mix with lists") {
  WEFT_TEST_RNG(rng);
  std::vector<Shape> shapes = {Shape{33}, Shape{2, 17}};
  auto p = random_list<double>(rng, shapes, -1, 1);
  auto scale = weft::from_vector<double>({0.25}, Shape{});
  auto pv = values_of_list(p);
  p = p * scale + 1;
  for (auto& t : pv)
    for (auto& x : t) x = x * 0.25 + 1;
  check_list(p, pv, 1, 1.0);
}

TEST_CASE("foreach: errors name the op, the index and the shapes, and write nothing") {
  WEFT_TEST_RNG(rng);
  auto a = random_list<float>(rng, {Shape{3}, Shape{4}}, -1, 1);
  auto before = values_of_list(a);
  auto expect_error = [&](auto&& f, const std::vector<std::string>& words) {
    try {
      f();
      FAIL("no weft::Error");
    } catch (const weft::Error& e) {
      std::string what = e.what();
      for (const auto& w : words) {
        INFO(what);
        CHECK(what.find(w) != std::string::npos);
      }
    }
    check_list(a, before, 0, 0);
  };
  auto b = random_list<float>(rng, {Shape{3}, Shape{5}}, -1, 1);
  expect_error([&] { a = a + b; }, {"weft::foreach", "tensor 1", "[4]", "[5]"});
  auto c = random_list<float>(rng, {Shape{3}}, -1, 1);
  expect_error([&] { a = a + c; }, {"weft::foreach", "lengths 2 and 1"});
  auto wide = weft::rand<float>({4, 4}, 1);
  TensorList<float> column({random_tensor<float>(rng, Shape{3}, -1, 1), wide.select(1, 0)});  // stride 4
  expect_error([&] { a = a * column; }, {"weft::foreach", "tensor 1", "[4]", "contiguous"});
  auto vec = weft::rand<float>({3}, 2);
  expect_error([&] { a = a * vec; }, {"one element", "[3]"});
  ScalarList<float> short_list{1.0f};
  expect_error([&] { a = a * short_list; }, {"lengths 2 and 1"});
  TensorList<float> overlapping({a[0], a[1]});
  expect_error([&] { weft::fuse(weft::assign(a, a + 1), weft::assign(overlapping, a)); }, {"overlap"});
}

TEST_CASE("foreach: WEFT_LOGS=foreach and output_code describe the list kernel") {
  WEFT_TEST_RNG(rng);
  auto p = random_list<float>(rng, {Shape{7}, Shape{9}}, -1, 1), g = random_list<float>(rng, {Shape{7}, Shape{9}}, -1, 1);
  const char* path = "foreach_test_log.txt";
  std::remove(path);
  // The log file is chosen once per process, so the lines are captured from the default stream
  // by describing the kernel directly (the same code the logger runs).
  weft::ListAssignment<float, weft::detail::expr_t<decltype(p - 0.5 * g)>> s{&p, p - 0.5 * g};
  weft::detail::IterationSpace space = weft::detail::plan_iteration(Shape{1}, {});
  space.foreach = true;
  std::string text = weft::detail::describe_kernel(space, "cpu", false, s);
  INFO(text);
  CHECK(text.find("out0[k][i] = out0[k][i] - (0.5 * in0[k][i])") != std::string::npos);
  CHECK(text.find("list of float32[2]") != std::string::npos);
  CHECK(text.find("for every tensor k") != std::string::npos);
}

}  // TEST_SUITE

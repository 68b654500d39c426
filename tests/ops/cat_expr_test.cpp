// SPDX-License-Identifier: MIT
/// @file cpu: horizontal fusion. cat(dim, e...) of expressions (tensors, strided and transposed
/// views, broadcasting operands, scalars, casts) against a double reference read element by element
/// from the operands, on one and two threads, as ONE kernel (counted in the fusion log); fuse of
/// statements of different shapes into poisoned destinations, with inputs that overlap other
/// statements' outputs; and every error, with nothing allocated or written.
#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <type_traits>

#include <weft/ops/join.hpp>
#include <weft/ops/matmul.hpp>
#include <weft/backend/threads.hpp>

#include "dense_reference.hpp"
#include "error_check.hpp"
#include "log_capture.hpp"
#include "reference.hpp"

using namespace weft_test;

namespace {

/// t's element at index idx of `full`, t broadcast to full (numpy rules), read from raw storage.
template <class T>
double cat_expr_read(const weft::TensorBase<T>& t, const Shape& full, const std::vector<std::int64_t>& idx) {
  std::vector<std::int64_t> at(std::size_t(t.dim()));
  const int lead = full.rank() - t.dim();
  for (int d = 0; d < t.dim(); ++d) at[std::size_t(d)] = t.shape()[d] == 1 ? 0 : idx[std::size_t(lead + d)];
  return value_at(t, at);
}

/// One operand of a cat: its shape and what it must give at an index of that shape.
struct CatExprPart {
  Shape shape;
  std::function<Expect(const std::vector<std::int64_t>&)> expect;
};

/// Every element of `out` (the parts joined along dim) against the parts' references.
template <class T>
Report cat_expr_check(const weft::TensorBase<T>& out, const std::vector<CatExprPart>& parts, int dim) {
  return check_output(out, [&](const std::vector<std::int64_t>& idx) {
    std::vector<std::int64_t> at = idx;
    std::size_t k = 0;
    while (at[std::size_t(dim)] >= parts[k].shape[dim]) at[std::size_t(dim)] -= parts[k++].shape[dim];
    return parts[k].expect(at);
  });
}

constexpr double kFloatEps = 0x1p-24;  // a float rounding, relative

/// The operands the tests join; each returns its expression and fills `part` (shape `s`). Tolerances:
/// the roundings of a naive float evaluation (one per op, 4 ulp for a library function).
struct CatExprOperands {
  Rng& rng;

  TensorView<float> view_of(const Shape& s) { return make_view<float>(rng, s, Domain{-3, 3}, random_layout(rng, false)); }

  /// a * 0.5 + tanh(b), b broadcasting
  auto scaled_plus_tanh(const Shape& s, CatExprPart& part) {
    const TensorView<float> a = view_of(s), b = view_of(broadcastable_to(rng, s));
    part = {s, [=](const std::vector<std::int64_t>& i) {
              const double x = cat_expr_read(a, s, i) * 0.5, y = std::tanh(cat_expr_read(b, s, i));
              return Expect{x + y, kFloatEps * (2 * std::fabs(x + y) + 5 * std::fabs(y)) + 1e-300};
            }};
    return a * 0.5f + weft::tanh(b);
  }
  /// sigmoid(c) * c over half c (math in float, the result a half value)
  auto half_sigmoid_times(const Shape& s, CatExprPart& part) {
    const TensorView<half> c = make_view<half>(rng, s, Domain{-3, 3}, random_layout(rng, false));
    part = {s, [=](const std::vector<std::int64_t>& i) {
              const double x = cat_expr_read(c, s, i), y = x / (1 + std::exp(-x));
              return Expect{y, ulp_of<half>(std::fabs(y)) + 6 * kFloatEps * std::fabs(y) + 1e-300};
            }};
    return weft::sigmoid(c) * c;
  }
  /// cast<float>(n) * 3 - 1 over int32 n (exact)
  auto cast_int(const Shape& s, CatExprPart& part) {
    const TensorView<std::int32_t> n =
        make_view<std::int32_t>(rng, s, Domain{-1000, 1000}, random_layout(rng, false));
    part = {s, [=](const std::vector<std::int64_t>& i) { return Expect{cat_expr_read(n, s, i) * 3 - 1, 0}; }};
    return weft::cast<float>(n) * 3 - 1;
  }
  /// a transposed view, read as it is (exact)
  auto transposed(const Shape& s, CatExprPart& part) {
    Shape reversed;
    std::vector<std::int64_t> order;
    for (int d = s.rank() - 1; d >= 0; --d) reversed.push_back(s[d]), order.push_back(d);
    const TensorView<float> v = view_of(reversed).permute(order);
    part = {s, [=](const std::vector<std::int64_t>& i) { return Expect{cat_expr_read(v, s, i), 0}; }};
    return v;
  }
  /// exp(d) - 1
  auto exp_minus_one(const Shape& s, CatExprPart& part) {
    const TensorView<float> d = view_of(s);
    part = {s, [=](const std::vector<std::int64_t>& i) {
              const double e = std::exp(cat_expr_read(d, s, i));
              return Expect{e - 1, kFloatEps * (5 * e + std::fabs(e - 1)) + 1e-300};
            }};
    return weft::exp(d) - 1.0f;
  }
  /// dd * 2 over double dd: promotes the whole cat to double (exact)
  auto double_twice(const Shape& s, CatExprPart& part) {
    const TensorView<double> dd = make_view<double>(rng, s, Domain{-3, 3}, random_layout(rng, false));
    part = {s, [=](const std::vector<std::int64_t>& i) { return Expect{cat_expr_read(dd, s, i) * 2, 0}; }};
    return dd * 2;
  }
};

/// `base` with dim's extent random (sometimes 0).
Shape cat_expr_shape(Rng& rng, Shape base, int dim) {
  base[dim] = rng.chance(0.1) ? 0 : rng.integer(1, 9);
  return base;
}

struct CatExprThreads {
  int saved = weft::get_num_threads();
  ~CatExprThreads() { weft::set_num_threads(saved); }
};

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("cat(dim, e...): random shapes and dims, 2-4 expression operands, against a double reference") {
  WEFT_TEST_RNG(rng);
  CatExprOperands make{rng};
  for (int iter = 0; iter < 24; ++iter) {
    const Shape base = random_shape(rng, 1, 4, 800);
    const auto random = random_dim(rng, base.rank());
    const std::int64_t d = random.dim;
    const int dim = random.wrapped;
    INFO("base shape ", shape_str(base), ", dim ", d, ", combination ", iter % 4);
    std::vector<CatExprPart> p(4);
    auto shape = [&] { return cat_expr_shape(rng, base, dim); };
    // The operands are made before the call (their shapes drawn in argument order, whatever it is).
    auto join = [&](const auto&... es) {
      const auto out = weft::cat(d, es...);
      p.resize(sizeof...(es));
      WEFT_CHECK_REPORT(cat_expr_check(out, p, dim));
    };
    switch (iter % 4) {
      case 0:
        join(make.scaled_plus_tanh(shape(), p[0]), make.half_sigmoid_times(shape(), p[1]), make.cast_int(shape(), p[2]));
        break;
      case 1:
        join(make.transposed(shape(), p[0]), make.exp_minus_one(shape(), p[1]), make.scaled_plus_tanh(shape(), p[2]),
             make.half_sigmoid_times(shape(), p[3]));
        break;
      case 2: {
        static_assert(std::is_same_v<decltype(weft::cat(0, make.double_twice(base, p[0]), make.exp_minus_one(base, p[1]))),
                                     Tensor<double>>);
        join(make.double_twice(shape(), p[0]), make.exp_minus_one(shape(), p[1]));
        break;
      }
      default:
        join(make.cast_int(shape(), p[0]), make.transposed(shape(), p[1]), make.transposed(shape(), p[2]));
    }
  }
}

TEST_CASE("cat(dim, e...): ONE kernel on one and two threads, the runtime-list overloads unchanged") {
  WEFT_TEST_RNG(rng);
  CatExprThreads guard;
  CatExprOperands make{rng};
  for (int threads : {1, 2}) {
    weft::set_num_threads(threads);
    for (std::int64_t d : {0, -1}) {
      INFO("threads ", threads, ", dim ", d);
      const Shape base{96, 200};
      const int dim = int(d < 0 ? d + 2 : d);
      std::vector<CatExprPart> p(3);
      Shape s0 = base, s1 = base, s2 = base;
      s0[dim] = 150, s1[dim] = 7, s2[dim] = 220;
      auto e0 = make.scaled_plus_tanh(s0, p[0]);
      auto e1 = make.exp_minus_one(s1, p[1]);
      auto e2 = make.half_sigmoid_times(s2, p[2]);
      Tensor<float> out;
      const auto lines = weft_test::fusion_lines([&] { out = weft::cat(d, e0, e1, e2); });
      REQUIRE(lines.size() == 1);
      CHECK(has(lines[0], "fused 3 statements of different shapes into 1 kernel"));
      CHECK(has(lines[0], std::to_string(threads) + " thread(s)"));
      CHECK(has(lines[0], "tanh("));
      WEFT_CHECK_REPORT(cat_expr_check(out, p, dim));
    }
  }
  // output_code (the first run of a kernel type): each statement's pseudo-source over its own space.
  {
    const Tensor<float> u = random_contiguous<float>(rng, Shape{3, 4}, Domain{}), v = random_contiguous<float>(rng, Shape{3, 2}, Domain{});
    LogCapture capture;
    weft::set_logs("output_code");
    const Tensor<float> joined = weft::cat(-1, weft::abs(u) * 3, weft::sqrt(weft::abs(v)) - 2);
    weft::set_logs("");
    const std::string code = capture.text();
    INFO(code);
    CHECK(has(code, "kernel multi-shape (cpu, 18 elements"));
    CHECK(has(code, "2 statements of different shapes, each over its own iteration space, in 1 kernel"));
    CHECK(has(code, "statement 0 of 2, 12 elements"));
    CHECK(has(code, "out0[i] = abs(in0[i]) * 3;"));
    CHECK(has(code, "statement 1 of 2, 6 elements"));
    CHECK(has(code, "out0[i] = sqrt(abs(in0[i])) - 2;"));
    CHECK(joined.shape() == Shape{3, 6});
  }
  // Operands of one shape: one pointwise kernel of three statements.
  const Tensor<float> a = random_contiguous<float>(rng, Shape{4, 5}, Domain{});
  Tensor<float> out;
  const auto lines = weft_test::fusion_lines([&] { out = weft::cat(1, a + 1, a * 2, a); });
  REQUIRE(lines.size() == 1);
  CHECK(has(lines[0], "fused 3 statement(s) into 1 kernel"));
  CHECK(out.shape() == Shape{4, 15});
  // A braced list and a vector still go to the runtime-list cat (an integer first picks cat(dim, e...)).
  CHECK(weft::cat({a, a}, 0).shape() == Shape{8, 5});
  CHECK(weft::cat(std::vector<Tensor<float>>{a, a, a}, -1).shape() == Shape{4, 15});
  CHECK(weft::cat(0, a).to_vector() == a.to_vector());
}

TEST_CASE("cat(dim, e...): errors name the op, the operands, the shapes and the fix; nothing is allocated") {
  const Tensor<float> a = weft::zeros<float>(Shape{2, 3}), b = weft::zeros<float>(Shape{2, 4}),
                      c = weft::zeros<float>(Shape{2, 3, 1}), row = weft::zeros<float>(Shape{5});
  std::string m = error_before_allocation([&] { weft::cat(0, a * 2, b + 1); });
  CHECK(has(m, "weft::cat: operand 1 has shape [2, 4] but operand 0 has shape [2, 3]"));
  CHECK(has(m, "differ in dim 1 (4 vs 3)"));
  CHECK(has(m, "every dim but the cat dim must match"));
  m = error_before_allocation([&] { weft::cat(-1, a, weft::exp(c)); });
  CHECK(has(m, "operand 1 has shape [2, 3, 1] of rank 3"));
  CHECK(has(m, "same rank"));
  m = error_before_allocation([&] { weft::cat(2, a, a * a); });
  CHECK(has(m, "dim 2 is out of range for an input of shape [2, 3]"));
  m = error_before_allocation([&] { weft::cat(-3, a, a); });
  CHECK(has(m, "dim -3 is out of range"));
  const Tensor<float> scalar = weft::zeros<float>(Shape{});
  m = error_before_allocation([&] { weft::cat(0, scalar + 1, a); });
  CHECK(has(m, "zero-dimensional"));
  m = error_before_allocation([&] { weft::cat(0, a, a + row); });
  CHECK(has(m, "weft::cat"));
  CHECK(has(m, "[2, 3]"));
  CHECK(has(m, "[5]"));
  m = error_before_allocation([&] { weft::cat(0, a, Tensor<float>() * 2); });
  CHECK(has(m, "operand 1 reads an empty"));
  const TensorView<float> gpu = fake_cuda_view<float>(Shape{2, 3});
  m = error_before_allocation([&] { weft::cat(0, a + 1, gpu * 2); });
  CHECK(has(m, "operand 1 (shape [2, 3]) is on cuda:0 but operand 0 (shape [2, 3]) is on cpu"));
  CHECK(has(m, ".to(device)"));
  m = error_before_allocation([&] { weft::cat(1, a + gpu, a); });
  CHECK(has(m, "operand 0 reads tensors on cpu and on cuda:0"));
  // Operands of different dtypes are promoted (torch.cat), not refused.
  static_assert(std::is_same_v<decltype(weft::cat(0, a, weft::cast<double>(a))), Tensor<double>>);
  static_assert(std::is_same_v<decltype(weft::cat(0, weft::cast<half>(a), weft::cast<bfloat16>(a))), Tensor<float>>);
  // The runtime-list cat keeps its empty-list error.
  CHECK(has(error_of([&] { weft::cat(std::vector<Tensor<float>>{}, 0); }), "empty list"));
}

TEST_CASE("fuse: statements of different shapes into poisoned destinations, one kernel, on two threads") {
  WEFT_TEST_RNG(rng);
  CatExprThreads guard;
  CatExprOperands make{rng};
  for (int iter = 0; iter < 12; ++iter) {
    weft::set_num_threads(iter % 2 ? 2 : 1);
    const Shape s0 = random_shape(rng, 1, 4, iter % 3 == 2 ? 40000 : 900);
    const Shape s1 = random_shape(rng, 1, 3, 900), s2 = random_shape(rng, 0, 2, 50);
    INFO("shapes ", shape_str(s0), ", ", shape_str(s1), ", ", shape_str(s2));
    const TensorView<float> y0 = make_destination<float>(rng, s0, random_layout(rng, true));
    const TensorView<double> y1 = make_destination<double>(rng, s1, random_layout(rng, true));
    Tensor<float> y2;  // takes its right-hand side's shape
    CatExprPart p0, p1, p2;
    auto e0 = make.scaled_plus_tanh(s0, p0);
    auto e1 = make.cast_int(s1, p1);
    auto e2 = make.exp_minus_one(s2, p2);
    const auto lines = weft_test::fusion_lines([&] { weft::fuse(weft::assign(y0, e0), weft::assign(y1, e1), weft::assign(y2, e2)); });
    if (!(s0 == s1 && s1 == s2)) {
      REQUIRE(lines.size() == 1);
      CHECK(has(lines[0], "fused 3 statements of different shapes into 1 kernel"));
    }
    REQUIRE(y2.shape() == s2);
    WEFT_CHECK_REPORT(check_output(y0, p0.expect));
    WEFT_CHECK_REPORT(check_output(y1, p1.expect));
    WEFT_CHECK_REPORT(check_output(y2, p2.expect));
  }
}

TEST_CASE("fuse: statements of different shapes read the values from before the call") {
  WEFT_TEST_RNG(rng);
  // y (3 x 4) doubles in place while z (4 x 3) reads y transposed and w (4) reads y's first row:
  // both must see y's old values (they are copied; y's own statement reads in place).
  Tensor<float> y = random_contiguous<float>(rng, Shape{3, 4}, Domain{-3, 3});
  Tensor<float> z = weft::zeros<float>(Shape{4, 3}), w = weft::zeros<float>(Shape{4});
  const std::vector<double> old = values_of(y);
  weft::fuse(weft::assign(y.view(), y * 2), weft::assign(z.view(), y.transpose(0, 1) + 1),
             weft::assign(w.view(), y.select(0, 0) - 1));
  const std::vector<double> yv = values_of(y), zv = values_of(z), wv = values_of(w);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) {
      CHECK(yv[std::size_t(i * 4 + j)] == 2 * old[std::size_t(i * 4 + j)]);
      CHECK(zv[std::size_t(j * 3 + i)] == round_float(old[std::size_t(i * 4 + j)] + 1));
    }
  for (int j = 0; j < 4; ++j) CHECK(wv[std::size_t(j)] == round_float(old[std::size_t(j)] - 1));

  // Two halves of one tensor swapped through each other, in statements of different shapes.
  Tensor<float> x = random_contiguous<float>(rng, Shape{5, 2}, Domain{-3, 3});
  const std::vector<double> xv = values_of(x);
  const TensorView<float> top = x.narrow(0, 0, 2), bottom = x.narrow(0, 2, 3);
  weft::fuse(weft::assign(top, bottom.narrow(0, 0, 2) * 10), weft::assign(bottom, top.select(0, 0) + 1));
  const std::vector<double> now = values_of(x);
  for (int j = 0; j < 2; ++j) {
    for (int i = 0; i < 2; ++i) CHECK(now[std::size_t(i * 2 + j)] == round_float(xv[std::size_t((i + 2) * 2 + j)] * 10));
    for (int i = 2; i < 5; ++i) CHECK(now[std::size_t(i * 2 + j)] == round_float(xv[std::size_t(j)] + 1));
  }
}

TEST_CASE("cat(dim, e...) and fuse of different shapes with a matmul operand: evaluated first") {
  WEFT_TEST_RNG(rng);
  const Tensor<double> a = random_contiguous<double>(rng, Shape{3, 4}, Domain{-2, 2}),
                       b = random_contiguous<double>(rng, Shape{4, 5}, Domain{-2, 2}),
                       x = random_contiguous<double>(rng, Shape{2, 5}, Domain{-2, 2});
  const std::vector<double> av = values_of(a), bv = values_of(b), xv = values_of(x);
  auto product = [&](int i, int j) {
    double s = 0;
    for (int k = 0; k < 4; ++k) s += av[std::size_t(i * 4 + k)] * bv[std::size_t(k * 5 + j)];
    return s;
  };
  const Tensor<double> out = weft::cat(0, weft::matmul(a, b) + 1, x * 2);
  REQUIRE(out.shape() == Shape{5, 5});
  WEFT_CHECK_REPORT(check_output(out, [&](const std::vector<std::int64_t>& i) {
    const int r = int(i[0]), c = int(i[1]);
    return r < 3 ? Expect{product(r, c) + 1, 1e-13} : Expect{xv[std::size_t((r - 3) * 5 + c)] * 2, 0};
  }));
  Tensor<double> p, q;
  weft::fuse(weft::assign(p, weft::matmul(a, b) * 3), weft::assign(q, x - 1));
  REQUIRE(p.shape() == Shape{3, 5});
  REQUIRE(q.shape() == Shape{2, 5});
  WEFT_CHECK_REPORT(check_output(p, [&](const std::vector<std::int64_t>& i) {
    return Expect{3 * product(int(i[0]), int(i[1])), 1e-13};
  }));
  WEFT_CHECK_REPORT(check_output(q, [&](const std::vector<std::int64_t>& i) {
    return Expect{xv[std::size_t(i[0] * 5 + i[1])] - 1, 0};
  }));
}

TEST_CASE("fuse: errors with statements of different shapes write nothing") {
  WEFT_TEST_RNG(rng);
  Tensor<float> a = random_contiguous<float>(rng, Shape{3, 4}, Domain{});
  Tensor<float> y0 = random_contiguous<float>(rng, Shape{3, 4}, Domain{}), y1 = random_contiguous<float>(rng, Shape{4}, Domain{});
  Tensor<float> y2;
  const auto s0 = storage_snapshot(y0), s1 = storage_snapshot(y1);
  // A right-hand side that does not broadcast to its view.
  std::string m = error_of([&] { weft::fuse(weft::assign(y0.view(), a), weft::assign(y2, a * 2), weft::assign(y1.view(), a)); });
  CHECK(has(m, "weft::fuse: cannot write an expression of shape [3, 4] into a destination of shape [4]"));
  CHECK(storage_snapshot(y0) == s0);
  CHECK(storage_snapshot(y1) == s1);
  CHECK(!y2.defined());
  // Outputs that overlap: a tensor and one of its rows.
  m = error_of([&] { weft::fuse(weft::assign(y0.view(), a + 1), weft::assign(y0.select(0, 1), y1 * 2), weft::assign(y2, a)); });
  CHECK(has(m, "weft::fuse: outputs 0 and 1 overlap in memory"));
  CHECK(storage_snapshot(y0) == s0);
  CHECK(!y2.defined());
  // Operands on two devices.
  m = error_of([&] { weft::fuse(weft::assign(y0.view(), a), weft::assign(y1.view(), fake_cuda_view<float>(Shape{4}))); });
  CHECK(has(m, "is on cuda:0 but the kernel runs on cpu"));
  CHECK(storage_snapshot(y0) == s0);
  CHECK(storage_snapshot(y1) == s1);
}

TEST_CASE("cat(dim, e...) along the last dim streams its stores into row slices, one shape or several") {
  // Outputs of 8 MiB and more whose rows are aligned runs of whole packets take non-temporal
  // stores (plan/statements.hpp: rows_aligned), also into slices of every row and in the
  // multi-shape kernel; the values must not change, on one and two threads.
  WEFT_TEST_RNG(rng);
  const CatExprThreads restore;
  const Tensor<float> x = random_contiguous<float>(rng, Shape{1024, 2048}, Domain{});
  const Tensor<float> y = random_contiguous<float>(rng, Shape{1024, 2048}, Domain{});
  const Tensor<float> z = random_contiguous<float>(rng, Shape{1024, 1024}, Domain{});
  for (int threads : {1, 2}) {
    weft::set_num_threads(threads);
    Tensor<float> same, mixed;
    const std::vector<std::string> same_log = weft_test::fusion_lines([&] { same = weft::cat(-1, x * 0.5f + 1.0f, y - x, x * y); });
    const std::vector<std::string> mixed_log = weft_test::fusion_lines([&] { mixed = weft::cat(-1, x + 1.0f, z * 2.0f); });
    REQUIRE(same_log.size() == 1);
    REQUIRE(mixed_log.size() == 1);
    CHECK(same_log[0].find("streaming stores") != std::string::npos);
    CHECK(mixed_log[0].find("streaming stores for 2 statement(s)") != std::string::npos);
    REQUIRE(same.shape() == Shape{1024, 6144});
    REQUIRE(mixed.shape() == Shape{1024, 3072});
    bool same_ok = true, mixed_ok = true;  // one rounding each: the float op's result exactly
    for (std::int64_t i = 0; i < 1024; ++i)
      for (std::int64_t j = 0; j < 2048; ++j) {
        const float a = x.data()[i * 2048 + j], b = y.data()[i * 2048 + j];
        const float* row = same.data() + i * 6144;
        same_ok &= row[j] == float(double(a) * 0.5 + 1) && row[2048 + j] == float(double(b) - a) &&
                   row[4096 + j] == float(double(a) * b);
        mixed_ok &= mixed.data()[i * 3072 + j] == float(double(a) + 1);
        if (j < 1024) mixed_ok &= mixed.data()[i * 3072 + 2048 + j] == 2 * z.data()[i * 1024 + j];
      }
    CHECK(same_ok);
    CHECK(mixed_ok);
  }
}

}  // TEST_SUITE("cpu")

// SPDX-License-Identifier: MIT
/// @file cpu: nn::cross_entropy and its backward against double-precision references: random shapes, layouts and
/// magnitudes (up to +-1000, ties), every floating dtype, int64 and int32 targets, every reduction, logits read in
/// place through a narrowed (padded) view, gradients written into strided and aliased views, finite differences in
/// double, and every error (nothing allocated, nothing written).
#include <memory>

#include <weft/nn/cross_entropy.hpp>

#include "dense_reference.hpp"
#include "error_check.hpp"
#include "reference.hpp"

using namespace weft_test;
using weft::Device;
using weft::nn::Reduction;

namespace {

constexpr Reduction kReductions[] = {Reduction::none, Reduction::mean, Reduction::sum};

const char* reduction_name(Reduction r) {
  return r == Reduction::none ? "none" : r == Reduction::mean ? "mean" : "sum";
}

/// One row's softmax statistics in double, and the error bounds of a run in precision eps: the
/// sum of exp is a pairwise sum of n terms each within a few roundings, plus the error of each
/// exp's argument x - m (eps |x - m| relative, weighted by the softmax).
struct RowReference {
  double m = 0, s = 0, log_s = 0;
  double rel_s = 0;  // relative error bound of s
};

RowReference row_reference(const double* x, std::int64_t n, double eps) {
  RowReference r;
  r.m = -INFINITY;
  for (std::int64_t j = 0; j < n; ++j) r.m = std::max(r.m, x[j]);
  CompensatedSum s, spread;
  for (std::int64_t j = 0; j < n; ++j) {
    const double e = std::exp(x[j] - r.m);
    s.add(e);
    spread.add(e * std::fabs(x[j] - r.m));
  }
  r.s = s.value();
  r.log_s = std::log(r.s);
  r.rel_s = (std::log2(double(n)) + 20) * eps + eps * spread.value() / r.s;
  return r;
}

/// The losses of every row (want and tol, unreduced) in double.
template <class T>
std::vector<Expect> loss_reference(const std::vector<double>& x, const std::vector<std::int64_t>& t, std::int64_t n) {
  constexpr double eps = compute_eps<T>();
  std::vector<Expect> out(t.size());
  for (std::size_t r = 0; r < t.size(); ++r) {
    const double* xr = x.data() + r * std::size_t(n);
    const RowReference row = row_reference(xr, n, eps);
    const double shift = xr[t[r]] - row.m;
    out[r].want = row.log_s - shift;
    out[r].tol = row.rel_s + 4 * eps * (std::fabs(row.log_s) + std::fabs(shift)) + ulp_of<T>(out[r].want);
  }
  return out;
}

/// The reduced loss from the rows' (the mean or the sum of their wants, tolerances added up, plus a
/// pairwise sum's rounding).
template <class T>
Expect reduce_reference(const std::vector<Expect>& rows, Reduction reduction) {
  constexpr double eps = compute_eps<T>();
  CompensatedSum want, tol, mag;
  for (const Expect& e : rows) want.add(e.want), tol.add(e.tol), mag.add(std::fabs(e.want));
  const double k = reduction == Reduction::mean ? 1.0 / double(rows.size()) : 1.0;
  Expect e;
  e.want = rows.empty() && reduction == Reduction::mean ? NAN : want.value() * k;
  e.tol = (tol.value() + (std::log2(double(rows.size()) + 1) + 4) * eps * mag.value()) * k + ulp_of<T>(e.want);
  // A total beyond T's range rounds to inf (a half sum of large losses); within the tolerance of
  // that edge either result is right.
  const bool low_inf = std::isinf(round_to<T>(e.want - e.tol)), high_inf = std::isinf(round_to<T>(e.want + e.tol));
  if (low_inf != high_inf) e.skip = true;
  else if (low_inf) e.want = round_to<T>(e.want);
  return e;
}

/// dlogits_ij = g_i (p_ij - [j == t_i]) in double, with the bounds of a run in precision eps.
template <class T>
std::vector<Expect> gradient_reference(const std::vector<double>& x, const std::vector<std::int64_t>& t,
                                       const std::vector<double>& g, std::int64_t n) {
  constexpr double eps = compute_eps<T>();
  // exp(x - m) below the compute type's normal range keeps only an absolute precision
  constexpr double tiny = std::is_same_v<T, double> ? 0x1p-1074 : 0x1p-149;
  std::vector<Expect> out(x.size());
  for (std::size_t r = 0; r < t.size(); ++r) {
    const double* xr = x.data() + r * std::size_t(n);
    const RowReference row = row_reference(xr, n, eps);
    for (std::int64_t j = 0; j < n; ++j) {
      const double p = std::exp(xr[j] - row.m) / row.s;
      const double hit = j == t[r] ? 1.0 : 0.0;
      Expect& e = out[r * std::size_t(n) + std::size_t(j)];
      e.want = g[r] * (p - hit);
      e.tol = std::fabs(g[r]) * (p * (row.rel_s + eps * std::fabs(xr[j] - row.m) + 6 * eps) + 4 * eps * hit + 2 * tiny) +
              ulp_of<T>(e.want);
    }
  }
  return out;
}

template <class I>
Tensor<I> random_targets(Rng& rng, const Shape& lead, std::int64_t n) {
  std::vector<I> v(std::size_t(lead.numel()));
  for (I& t : v) t = I(rng.integer(0, n - 1));
  return weft::from_vector<I>(v, lead);
}

/// Logit values: ordinary, large magnitudes (+-1000: exp overflows without the max), or a coarse
/// grid (ties, rows of equal values).
Domain logit_domain(Rng& rng) {
  switch (rng.integer(0, 2)) {
    case 0: return Domain{-4, 4};
    case 1: return Domain{-1000, 1000};
    default: {
      Domain d{-2, 2};
      d.grid = 1;
      return d;
    }
  }
}

/// Random logits [lead..., n] in a random layout, targets, and their values read back.
template <class T, class I>
struct Problem {
  Shape shape;
  TensorView<T> x;
  Tensor<I> targets;
  std::vector<double> xv;
  std::vector<std::int64_t> t;

  // (a view member is bound in the initializer list: assigning a view writes its elements)
  Problem(Rng& rng, const Shape& lead, std::int64_t n, const Domain& dom)
      : shape(with_classes(lead, n)),
        x(make_view<T>(rng, shape, dom, random_layout(rng, false))),
        targets(random_targets<I>(rng, lead, n)),
        xv(values_of(x)) {
    for (double v : values_of(targets)) t.push_back(std::int64_t(v));
  }
  static Shape with_classes(const Shape& lead, std::int64_t n) {
    std::vector<std::int64_t> dims(lead.begin(), lead.end());
    dims.push_back(n);
    return Shape(dims);
  }
  std::string describe(Reduction reduction) const {
    return std::string(type_name<T>()) + ", targets " + type_name<I>() + ", logits " + shape_str(shape) +
           ", reduction " + reduction_name(reduction);
  }
};

template <class T, class I>
void check_cross_entropy(Rng& rng, const Shape& lead, std::int64_t n, const Domain& dom) {
  const Problem<T, I> p(rng, lead, n, dom);
  const std::vector<Expect> rows = loss_reference<T>(p.xv, p.t, n);
  for (Reduction reduction : kReductions) {
    const std::string what =
        p.describe(reduction) + ", domain [" + std::to_string(dom.lo) + ", " + std::to_string(dom.hi) + "]";
    INFO(what);
    const Tensor<T> loss = weft::nn::cross_entropy(p.x, p.targets, reduction);
    if (reduction == Reduction::none) {
      REQUIRE(loss.shape() == lead);
      WEFT_CHECK_REPORT(check_output(loss, rows));
    } else {
      REQUIRE(loss.shape() == Shape{});
      WEFT_CHECK_REPORT(check_output(loss, std::vector<Expect>{reduce_reference<T>(rows, reduction)}));
    }
  }
}

/// The gradient for each reduction, from a tensor (or number) grad_loss, returned and written
/// into a poisoned destination of a random layout.
template <class T, class I>
void check_backward(Rng& rng, const Shape& lead, std::int64_t n, const Domain& dom) {
  const Problem<T, I> p(rng, lead, n, dom);
  const std::int64_t rows = lead.numel();
  for (Reduction reduction : kReductions) {
    const bool per_row = reduction == Reduction::none;
    const TensorView<T> grad =
        make_view<T>(rng, per_row ? lead : Shape{}, Domain{-2, 2}, random_layout(rng, false));
    const std::vector<double> gv = values_of(grad);
    std::vector<double> g(static_cast<std::size_t>(rows));
    for (std::int64_t r = 0; r < rows; ++r)
      g[std::size_t(r)] = (per_row ? gv[std::size_t(r)] : gv[0]) / (reduction == Reduction::mean ? double(rows) : 1.0);
    const std::vector<Expect> want = gradient_reference<T>(p.xv, p.t, g, n);
    const std::string what = p.describe(reduction);
    INFO(what);
    const Tensor<T> dx = weft::nn::cross_entropy_backward(grad, p.x, p.targets, reduction);
    REQUIRE(dx.shape() == p.shape);
    WEFT_CHECK_REPORT(check_output(dx, want));
    const TensorView<T> out = make_destination<T>(rng, p.shape, random_layout(rng, true));
    weft::nn::cross_entropy_backward(out, grad, p.x, p.targets, reduction);
    WEFT_CHECK_REPORT(check_output(out, want));
    if (!per_row) {  // the number form of grad_loss
      const std::vector<double> g1(std::size_t(rows), gv[0] / (reduction == Reduction::mean ? double(rows) : 1.0));
      WEFT_CHECK_REPORT(check_output(weft::nn::cross_entropy_backward(double(gv[0]), p.x, p.targets, reduction),
                                     gradient_reference<T>(p.xv, p.t, g1, n)));
    }
  }
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE_TEMPLATE("nn::cross_entropy: random shapes, layouts and magnitudes", T, float, double, half, bfloat16) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 16; ++iter) {
    const Shape lead = random_shape(rng, 0, 3, 64, 0.05);
    const std::int64_t n = rng.chance(0.2) ? rng.integer(1, 3) : rng.integer(1, 700);
    const Domain dom = logit_domain(rng);
    if (rng.chance(0.5)) check_cross_entropy<T, std::int64_t>(rng, lead, n, dom);
    else check_cross_entropy<T, std::int32_t>(rng, lead, n, dom);
  }
}

TEST_CASE_TEMPLATE("nn::cross_entropy_backward: random shapes, layouts and magnitudes", T, float, double, half,
                   bfloat16) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 12; ++iter) {
    const Shape lead = random_shape(rng, 0, 3, 48, 0.05);
    const std::int64_t n = rng.chance(0.2) ? rng.integer(1, 3) : rng.integer(1, 500);
    const Domain dom = logit_domain(rng);
    if (rng.chance(0.5)) check_backward<T, std::int64_t>(rng, lead, n, dom);
    else check_backward<T, std::int32_t>(rng, lead, n, dom);
  }
}

TEST_CASE("nn::cross_entropy: integer expressions as targets are evaluated first") {
  WEFT_TEST_RNG(rng);
  const std::int64_t n = rng.integer(2, 40);
  const Shape lead{rng.integer(1, 9), rng.integer(1, 5)};
  const Problem<float, std::int64_t> p(rng, lead, n, logit_domain(rng));
  // targets - 1 + 1 and cast<int32_t>(targets) hold the same class indices as p.targets.
  const std::vector<Expect> rows = loss_reference<float>(p.xv, p.t, n);
  WEFT_CHECK_REPORT(check_output(weft::nn::cross_entropy(p.x, p.targets - 1 + 1, Reduction::none), rows));
  WEFT_CHECK_REPORT(
      check_output(weft::nn::cross_entropy(p.x, weft::cast<std::int32_t>(p.targets), Reduction::none), rows));
  WEFT_CHECK_REPORT(check_output(weft::nn::cross_entropy(p.x, p.targets * 1),
                                 std::vector<Expect>{reduce_reference<float>(rows, Reduction::mean)}));
  const std::vector<double> ones(std::size_t(lead.numel()), 1.0);
  WEFT_CHECK_REPORT(check_output(weft::nn::cross_entropy_backward(1.0, p.x, p.targets + 0, Reduction::sum),
                                 gradient_reference<float>(p.xv, p.t, ones, n)));
  // An expression's targets are checked as a tensor's: a class index out of range names its row.
  const std::string m = error_of([&] { weft::nn::cross_entropy(p.x, p.targets + n); });
  CHECK(has(m, "weft::nn::cross_entropy: target "));
  CHECK(has(m, "is outside [0, " + std::to_string(n) + ")"));
}

TEST_CASE("nn::cross_entropy: GPT-2's padded vocabulary is read and written in place") {
  WEFT_TEST_RNG(rng);
  // Rows of Vp = 50304 with the first V = 50257 in use: narrow(-1, 0, V) is read through its row
  // stride (no copy), and the gradient goes into the first V columns of a padded [N, Vp] tensor.
  const std::int64_t rows = 6, V = 50257, Vp = 50304;
  const Tensor<float> padded = random_contiguous<float>(rng, Shape{rows, Vp}, Domain{-8, 8});
  const TensorView<const float> logits = padded.view().narrow(-1, 0, V);
  const Tensor<std::int64_t> targets = random_targets<std::int64_t>(rng, Shape{rows}, V);
  const std::vector<double> xv = values_of(logits), tv = values_of(targets);
  const std::vector<std::int64_t> t(tv.begin(), tv.end());
  const std::vector<Expect> row_losses = loss_reference<float>(xv, t, V);

  const std::int64_t copies = weft::detail::tensor_counters().copies.load();
  const Tensor<float> loss = weft::nn::cross_entropy(logits, targets);
  CHECK(weft::detail::tensor_counters().copies.load() == copies);
  WEFT_CHECK_REPORT(check_output(loss, std::vector<Expect>{reduce_reference<float>(row_losses, Reduction::mean)}));

  Tensor<float> grad = weft::empty<float>(Shape{rows, Vp});
  poison(grad);
  // The targets as a mutable view (a view of the batch, as a model slices its data): every overload takes it.
  Tensor<std::int64_t> target_copy = targets;
  const TensorView<std::int64_t> target_view = target_copy.view();
  const std::int64_t copies_before_backward = weft::detail::tensor_counters().copies.load();
  weft::nn::cross_entropy_backward(grad.view().narrow(-1, 0, V), 1.0, logits, target_view);
  CHECK(weft::detail::tensor_counters().copies.load() == copies_before_backward);
  CHECK(weft::nn::cross_entropy_backward(1.0, logits, target_view).shape() == logits.shape());
  // check_output also checks that the padding columns kept their poison.
  WEFT_CHECK_REPORT(check_output(grad.view().narrow(-1, 0, V),
                                 gradient_reference<float>(xv, t, std::vector<double>(rows, 1.0 / rows), V)));
}

TEST_CASE("nn::cross_entropy_backward: the gradient may replace the logits") {
  WEFT_TEST_RNG(rng);
  for (std::int64_t n : {7, 300, 5000}) {
    Tensor<float> x = random_contiguous<float>(rng, Shape{5, n}, Domain{-6, 6});
    const Tensor<std::int32_t> targets = random_targets<std::int32_t>(rng, Shape{5}, n);
    const std::vector<double> xv = values_of(x), tv = values_of(targets);
    const std::vector<std::int64_t> t(tv.begin(), tv.end());
    const std::vector<Expect> want = gradient_reference<float>(xv, t, std::vector<double>(5, 1.0), n);
    weft::nn::cross_entropy_backward(x.view(), 1.0, x, targets, Reduction::sum);
    INFO("n ", n);
    WEFT_CHECK_REPORT(check_output(x, want));
  }
  // The same elements through a transposed view (classes not unit-stride): read from a copy,
  // computed densely, then written back through the view.
  {
    Tensor<float> base = random_contiguous<float>(rng, Shape{10, 4}, Domain{-6, 6});
    const TensorView<float> xt = base.view().transpose(0, 1);
    const Tensor<std::int64_t> targets = random_targets<std::int64_t>(rng, Shape{4}, 10);
    const std::vector<double> xv = values_of(xt), tv = values_of(targets);
    const std::vector<Expect> want = gradient_reference<float>(
        xv, std::vector<std::int64_t>(tv.begin(), tv.end()), std::vector<double>(4, 0.25), 10);
    weft::nn::cross_entropy_backward(xt, 1.0, xt, targets);
    WEFT_CHECK_REPORT(check_output(xt, want));
  }
  // A logits view that overlaps the output shifted by one column is read from a copy.
  Tensor<double> base = random_contiguous<double>(rng, Shape{4, 9}, Domain{-3, 3});
  const Tensor<double> before = base.clone();
  const Tensor<std::int64_t> targets = random_targets<std::int64_t>(rng, Shape{4}, 8);
  const std::vector<double> xv = values_of(before.view().narrow(1, 1, 8)), tv = values_of(targets);
  weft::nn::cross_entropy_backward(base.view().narrow(1, 0, 8), 1.0, base.view().narrow(1, 1, 8), targets,
                                   Reduction::sum);
  const std::vector<Expect> want =
      gradient_reference<double>(xv, std::vector<std::int64_t>(tv.begin(), tv.end()), std::vector<double>(4, 1.0), 8);
  const std::vector<double> got = values_of(base.view().narrow(1, 0, 8));
  for (std::size_t k = 0; k < got.size(); ++k) CHECK(std::fabs(got[k] - want[k].want) <= want[k].tol);
}

TEST_CASE("nn::cross_entropy_backward: finite differences in double") {
  WEFT_TEST_RNG(rng);
  const Shape shape{3, 5};
  Tensor<double> x = random_contiguous<double>(rng, shape, Domain{-3, 3});
  const Tensor<std::int64_t> targets = weft::from_vector<std::int64_t>({4, 0, 2});
  const Tensor<double> w = random_contiguous<double>(rng, Shape{3}, Domain{-2, 2});
  // The loss of each reduction as a scalar: none is weighted by w (its grad_loss).
  auto scalar_loss = [&](Reduction r) {
    const std::vector<double> l = values_of(weft::nn::cross_entropy(x, targets, r));
    if (r != Reduction::none) return l[0];
    const std::vector<double> wv = values_of(w);
    return l[0] * wv[0] + l[1] * wv[1] + l[2] * wv[2];
  };
  for (Reduction r : kReductions) {
    const std::string what = reduction_name(r);
    INFO(what);
    const std::vector<double> analytic =
        values_of(r == Reduction::none ? weft::nn::cross_entropy_backward(w, x, targets, r)
                                       : weft::nn::cross_entropy_backward(1.0, x, targets, r));
    for (std::int64_t k = 0; k < shape.numel(); ++k) {
      const double h = 1e-5, x0 = x.data()[k];
      x.data()[k] = x0 + h;
      const double up = scalar_loss(r);
      x.data()[k] = x0 - h;
      const double down = scalar_loss(r);
      x.data()[k] = x0;
      CHECK(std::fabs((up - down) / (2 * h) - analytic[std::size_t(k)]) <= 1e-8);
    }
  }
}

TEST_CASE("nn::cross_entropy: special rows and empty inputs") {
  // Equal logits: every class has probability 1/C, the loss is log C; one class: the loss is 0.
  const Tensor<float> flat = weft::full<float>(Shape{2, 1000}, 3.5f);
  const Tensor<std::int64_t> t2 = weft::from_vector<std::int64_t>({0, 999});
  for (double v : values_of(weft::nn::cross_entropy(flat, t2, Reduction::none)))
    CHECK(std::fabs(v - std::log(1000.0)) <= 1e-5);
  CHECK(values_of(weft::nn::cross_entropy(weft::full<float>(Shape{3, 1}, -7.0f),
                                          weft::zeros<std::int64_t>(Shape{3}), Reduction::sum))[0] == 0.0);
  // Logits of +-1000: exp would overflow without the max; the loss stays exact where it is 0 or 2000.
  const Tensor<float> big = weft::from_vector<float>({1000, -1000, -1000, 1000}, Shape{2, 2});
  const std::vector<double> l = values_of(weft::nn::cross_entropy(big, weft::from_vector<std::int64_t>({0, 0}),
                                                                  Reduction::none));
  CHECK(l[0] == 0.0);
  CHECK(l[1] == 2000.0);
  // No rows: none gives shape [0], sum 0, mean NaN (as PyTorch); the gradient is empty.
  const Tensor<float> none = weft::zeros<float>(Shape{0, 5});
  const Tensor<std::int64_t> t0 = weft::zeros<std::int64_t>(Shape{0});
  CHECK(weft::nn::cross_entropy(none, t0, Reduction::none).shape() == Shape{0});
  CHECK(values_of(weft::nn::cross_entropy(none, t0, Reduction::sum))[0] == 0.0);
  CHECK(std::isnan(values_of(weft::nn::cross_entropy(none, t0))[0]));
  CHECK(weft::nn::cross_entropy_backward(1.0, none, t0).shape() == Shape{0, 5});
  // A single row of 1-D logits (targets 0-dim).
  const Tensor<double> one = weft::from_vector<double>({1, 2, 3});
  const Tensor<std::int64_t> t_one = weft::full<std::int64_t>(Shape{}, 2);
  CHECK(std::fabs(values_of(weft::nn::cross_entropy(one, t_one))[0] -
                  (std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 3)) <= 1e-15);
}

TEST_CASE("nn::cross_entropy: errors name the op, the shapes and the bad value; nothing is allocated or written") {
  const Tensor<float> x = weft::zeros<float>(Shape{4, 10});
  const Tensor<std::int64_t> t = weft::from_vector<std::int64_t>({1, 2, 3, 4});
  const Tensor<std::int64_t> bad = weft::from_vector<std::int64_t>({1, 2, 10, -1});
  const Tensor<std::int32_t> negative = weft::from_vector<std::int32_t>({-1, 2, 3, 4});
  const Tensor<float> x3 = weft::zeros<float>(Shape{2, 3, 5});
  const Tensor<std::int64_t> t3 = weft::full<std::int64_t>(Shape{2, 3}, 5);
  auto& counters = weft::detail::tensor_counters();
  const std::int64_t allocations = counters.allocations.load();
  std::string m = error_of([&] { weft::nn::cross_entropy(x, bad); });
  CHECK(has(m, "weft::nn::cross_entropy"));
  CHECK(has(m, "target 10 at targets[2] (row 2)"));
  CHECK(has(m, "C = 10"));
  m = error_of([&] { weft::nn::cross_entropy(x, negative, Reduction::none); });
  CHECK(has(m, "target -1 at targets[0] (row 0)"));
  m = error_of([&] { weft::nn::cross_entropy(x3, t3.view().narrow(1, 0, 3), Reduction::sum); });
  CHECK(has(m, "target 5 at targets[0, 0] (row 0)"));
  m = error_of([&] { weft::nn::cross_entropy_backward(1.0, x, bad); });
  CHECK(has(m, "weft::nn::cross_entropy_backward"));
  CHECK(counters.allocations.load() == allocations);
  m = error_of([&] { weft::nn::cross_entropy(x, weft::zeros<std::int64_t>(Shape{5})); });
  CHECK(has(m, "targets of shape [5]"));
  CHECK(has(m, "logits of shape [4, 10]"));
  m = error_of([&] { weft::nn::cross_entropy(weft::zeros<float>(Shape{4, 0}), weft::zeros<std::int64_t>(Shape{4})); });
  CHECK(has(m, "no classes"));
  CHECK(has(m, "[4, 0]"));
  m = error_of([&] { weft::nn::cross_entropy(weft::zeros<float>(Shape{}), weft::zeros<std::int64_t>(Shape{})); });
  CHECK(has(m, "no class dim"));
  m = error_of([&] { weft::nn::cross_entropy(x, Tensor<std::int64_t>()); });
  CHECK(has(m, "targets are an empty"));
  auto fake = std::make_shared<weft::Storage>(nullptr, 0, Device::cuda(), nullptr);
  const weft::TensorView<std::int64_t> gpu(fake, Shape{4}, weft::contiguous_strides(Shape{4}), 0);
  m = error_of([&] { weft::nn::cross_entropy(x, gpu); });
  CHECK(has(m, "cuda:0"));
  CHECK(has(m, "[4, 10]"));

  // The backward: nothing written into grad_logits on any error.
  Tensor<float> out = weft::empty<float>(Shape{4, 10});
  poison(out);
  const std::vector<unsigned char> clean = storage_snapshot(out);
  const Tensor<float> g0 = weft::full<float>(Shape{}, 1.0f);
  m = error_of([&] { weft::nn::cross_entropy_backward(out, g0, x, weft::from_vector<std::int64_t>({0, 0, 0, 11})); });
  CHECK(has(m, "weft::nn::cross_entropy_backward"));
  CHECK(has(m, "target 11 at targets[3] (row 3)"));
  m = error_of([&] { weft::nn::cross_entropy_backward(out, weft::zeros<float>(Shape{4}), x, t); });
  CHECK(has(m, "grad_loss of shape [4]"));
  CHECK(has(m, "the loss's shape []"));
  m = error_of([&] { weft::nn::cross_entropy_backward(out, g0, x, t, Reduction::none); });
  CHECK(has(m, "grad_loss of shape []"));
  CHECK(has(m, "the loss's shape [4]"));
  m = error_of([&] { weft::nn::cross_entropy_backward(out.view().narrow(1, 0, 9), g0, x, t); });
  CHECK(has(m, "grad_logits of shape [4, 9]"));
  CHECK(has(m, "logits of shape [4, 10]"));
  Tensor<float> row = weft::zeros<float>(Shape{1, 10});
  m = error_of([&] { weft::nn::cross_entropy_backward(row.view().expand(Shape{4, 10}), g0, x, t); });
  CHECK(has(m, "expanded view"));
  m = error_of([&] { weft::nn::cross_entropy_backward(1.0, x, weft::zeros<std::int64_t>(Shape{4, 1})); });
  CHECK(has(m, "targets of shape [4, 1]"));
  CHECK(storage_snapshot(out) == clean);
  for (double v : values_of(row)) CHECK(v == 0.0);
}

}  // TEST_SUITE

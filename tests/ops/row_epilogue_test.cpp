// SPDX-License-Identifier: MIT
/// @file cpu: reductions with a kept dim inside a pointwise statement run as a row pass pair
/// (backend/row_epilogue.hpp; the fusion log says "row epilogue"): x / sum(x, d, true), the
/// layer-norm formula with mean and var, and softmax's exp(x - amax) / sum(exp(x - amax)) (a
/// reduction of a reduction) checked in double against the same ops computed one by one, on
/// poisoned destinations (views and new tensors), random shapes and dims (negative dims),
/// strided, permuted and expanded inputs, 16-bit dtypes, 1 and 2 threads; no full-size
/// intermediate is allocated; statements of a value per row (logsumexp's formula); the statements
/// that cannot run that way (keepdim false, several
/// dims, the destination overlapping an input) give the same values; a reduction assigned alone
/// writes an existing contiguous destination directly.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <weft/ops/reduce.hpp>
#include <weft/ops/statistics.hpp>
#include <weft/backend/threads.hpp>
#include <weft/log/log.hpp>

#include "error_check.hpp"
#include "log_capture.hpp"
#include "reference.hpp"

using namespace weft_test;

namespace {

constexpr const char* kRowEpilogueMark = "row epilogue";

/// Whether `statement` ran as a row pass pair (its fusion log says so).
bool row_ran_fused(const std::function<void()>& statement) {
  return fusion_log_of(statement).find(kRowEpilogueMark) != std::string::npos;
}

/// The values of x's row through idx (idx with dim d running), in double.
template <class T>
std::vector<double> row_values(const TensorView<T>& x, std::vector<std::int64_t> idx, int d) {
  std::vector<double> row;
  for (std::int64_t i = 0; i < x.shape()[d]; ++i) idx[std::size_t(d)] = i, row.push_back(value_at(x, idx));
  return row;
}

enum class RowForm { normalize, layer_norm, softmax };

/// What every element of a row needs, in double: n, the sum, the sum of |x|, the max, the
/// (biased) variance and the sum of exp(x - max).
struct RowStats {
  double n = 0, sum = 0, abs_sum = 0, mx = -INFINITY, var = 0, exp_sum = 0;
};
inline RowStats row_stats(const std::vector<double>& row) {
  RowStats st;
  st.n = double(row.size());
  for (double r : row) st.sum += r, st.abs_sum += std::fabs(r), st.mx = std::max(st.mx, r);
  const double mean = st.sum / st.n;
  for (double r : row) st.var += (r - mean) * (r - mean), st.exp_sum += std::exp(r - st.mx);
  st.var /= st.n;
  return st;
}

/// The form, op by op in double, at index idx, with a bound on T's rounding: n eps of each
/// reduction (any summation order) relative to the row's magnitude, carried through the form.
template <class T>
Expect row_form_expect(RowForm form, const TensorView<T>& x, const std::vector<std::int64_t>& idx, const RowStats& st) {
  const double n = st.n, eps = compute_eps<T>(), v = value_at(x, idx), sum = st.sum, abs_sum = st.abs_sum;
  Expect e;
  if (form == RowForm::normalize) {
    e.want = v / sum;
    // (+ the sum rounded to T, as the eager sum returns it)
    e.tol = ((n + 4) * eps * abs_sum + ulp_of<T>(sum)) / std::fabs(sum) * std::fabs(e.want) + 4 * ulp_of<T>(e.want);
  } else if (form == RowForm::layer_norm) {
    const double mean = sum / n, var = st.var;
    const double rstd = 1 / std::sqrt(var + 1e-5);
    e.want = (v - mean) * rstd;
    // the mean's error (n eps mean|x|) scaled by rstd, and var's relative error (2 n eps) in rstd
    // (+ the mean and var rounded to T, as the eager ops return them)
    e.tol = ((n + 8) * eps * (abs_sum / n + std::fabs(v)) + ulp_of<T>(mean)) * rstd +
            ((n + 8) * eps + ulp_of<T>(var) / (var + 1e-5)) * std::fabs(e.want) + 4 * ulp_of<T>(e.want);
  } else {
    const double s = st.exp_sum;
    e.want = std::exp(v - st.mx) / s;
    e.tol = ((n + 16) * eps + ulp_of<T>(s) / s) * std::fabs(e.want) + 4 * ulp_of<T>(e.want);
  }
  return e;
}

/// row_form_expect as check_output's callback: every row of x read and summarized once, up front
/// (value_at is slow, and every element of a row needs the whole row), and found again by its
/// row-major number over the dims other than d (a map keyed by index vectors cost the -O0
/// sanitizer build a third of these tests).
template <class T>
auto row_form_expecter(RowForm form, const TensorView<T>& x, int d) {
  const Shape shape = x.shape();
  std::vector<RowStats> stats;
  for_each_index(shape, [&](const std::vector<std::int64_t>& idx) {
    if (idx[std::size_t(d)] == 0) stats.push_back(row_stats(row_values(x, idx, d)));
  });
  return [form, x, d, shape, stats = std::move(stats)](const std::vector<std::int64_t>& idx) {
    std::int64_t row = 0;
    for (int k = 0; k < shape.rank(); ++k)
      if (k != d) row = row * shape[k] + idx[std::size_t(k)];
    return row_form_expect(form, x, idx, stats[std::size_t(row)]);
  };
}

/// `dst = form(x)` over dim `dim` (a view destination, or a Tensor taking a new shape).
template <class T, class D>
void row_form_assign(RowForm form, D& dst, const TensorView<T>& x, std::int64_t dim) {
  if (form == RowForm::normalize) dst = x / weft::sum(x, dim, true);
  else if (form == RowForm::layer_norm)
    dst = (x - weft::mean(x, dim, true)) * weft::rsqrt(weft::var(x, dim, 0.0, true) + 1e-5);
  else dst = weft::exp(x - weft::amax(x, dim, true)) / weft::sum(weft::exp(x - weft::amax(x, dim, true)), dim, true);
}

template <class T>
void row_form_check(Rng& rng, RowForm form, bool tensor_destination) {
  const Shape shape = random_shape(rng, 1, 4, 3000);
  const int rank = shape.rank();
  const std::int64_t dim = rng.integer(-rank, rank - 1);
  const int d = int(dim < 0 ? dim + rank : dim);
  Domain dom;
  if (form == RowForm::normalize) dom.lo = 0.5, dom.hi = 2;  // a well-conditioned sum
  const TensorView<T> x = make_view<T>(rng, shape, dom, random_layout(rng, false));
  INFO("form ", int(form), ", shape ", shape_str(shape), ", dim ", dim, ", strides ", shape_str(x.strides()),
       ", tensor destination ", tensor_destination);
  auto expect = row_form_expecter(form, x, d);
  if (shape.numel() == 0 || shape[d] == 0) return;  // no rows to normalize
  if (tensor_destination) {
    Tensor<T> y;
    row_form_assign(form, y, x, dim);
    REQUIRE(y.shape() == shape);
    WEFT_CHECK_REPORT(check_output(y, expect));
  } else {
    TensorView<T> y = make_destination<T>(rng, shape, random_layout(rng, true));
    row_form_assign(form, y, x, dim);
    WEFT_CHECK_REPORT(check_output(y, expect));
  }
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("row epilogue: x / sum, the layer-norm formula and softmax against the ops one by one") {
  WEFT_TEST_RNG(rng);
  const int threads_before = weft::get_num_threads();
  for (const int threads : {1, 2}) {
    weft::set_num_threads(threads);
    for (const RowForm form : {RowForm::normalize, RowForm::layer_norm, RowForm::softmax})
      for (int rep = 0; rep < 12; ++rep) {
        row_form_check<float>(rng, form, rep % 2 == 0);
        row_form_check<double>(rng, form, rep % 2 == 1);
        if (rep % 3 == 0) row_form_check<bfloat16>(rng, form, rep % 2 == 0), row_form_check<half>(rng, form, true);
      }
  }
  weft::set_num_threads(threads_before);
}

TEST_CASE("row epilogue: the fused path runs, in place too, and allocates no full-size intermediate") {
  WEFT_TEST_RNG(rng);
  const int threads_before = weft::get_num_threads();
  auto allocations = [] { return weft::detail::tensor_counters().allocations.load(); };
  for (const int threads : {1, 2}) {
    weft::set_num_threads(threads);
    Domain positive;
    positive.lo = 0.5, positive.hi = 2;
    // Rows along the last dim, and along dim 0 (blocks of columns); a transposed input.
    for (const std::int64_t dim : {std::int64_t(-1), std::int64_t(0)})
      for (const RowForm form : {RowForm::normalize, RowForm::softmax}) {
        const TensorView<float> x = make_view<float>(rng, Shape{300, 257}, positive, Layout::contiguous);
        const TensorView<float> xt = x.transpose(0, 1);
        for (const TensorView<float>& in : {x, xt}) {
          INFO("form ", int(form), ", dim ", dim, ", threads ", threads, ", transposed ", in.data() == xt.data() &&
                                                                                          !in.is_contiguous());
          TensorView<float> y = make_destination<float>(rng, in.shape(), Layout::contiguous);
          const std::int64_t before = allocations();
          CHECK(row_ran_fused([&] { row_form_assign(form, y, in, dim); }));
          CHECK(allocations() == before);
          const int d = dim < 0 ? 1 : 0;
          WEFT_CHECK_REPORT(
              check_output(y, row_form_expecter(form, in, d)));
        }
      }
    // The layer-norm formula: pass 1 computes the mean and the variance of each row.
    const TensorView<float> x = make_view<float>(rng, Shape{64, 300}, Domain{}, Layout::strided);
    Tensor<float> y;
    CHECK(row_ran_fused([&] { row_form_assign(RowForm::layer_norm, y, x, 1); }));
    WEFT_CHECK_REPORT(check_output(
        y, row_form_expecter(RowForm::layer_norm, x, 1)));
    // In place: each block reads its own rows before it writes them.
    Tensor<double> z = weft::eval(weft::cast<double>(make_view<float>(rng, Shape{40, 70}, positive, Layout::contiguous)));
    const Tensor<double> z0 = weft::eval(z);
    CHECK(row_ran_fused([&] { z = z / weft::sum(z, 1, true); }));
    WEFT_CHECK_REPORT(check_output(z, row_form_expecter(RowForm::normalize, z0.view(), 1)));
  }
  weft::set_num_threads(threads_before);
}

TEST_CASE("row epilogue: the row path on odd, short and long rows, 16-bit, and the block path on single-row blocks") {
  WEFT_TEST_RNG(rng);
  const int threads_before = weft::get_num_threads();
  Domain positive;
  positive.lo = 0.5, positive.hi = 2;
  for (const int threads : {1, 2}) {
    weft::set_num_threads(threads);
    // Contiguous rows along the last dim: one row at a time, row lengths around the packet widths
    // (1 to 64 lanes), a row longer than L1, and rows longer than a block of the block path.
    for (const std::int64_t n : {1, 3, 17, 33, 1000, 140000})
      for (const RowForm form : {RowForm::normalize, RowForm::layer_norm, RowForm::softmax}) {
        const std::int64_t rows = n > 100000 ? 2 : 37;
        INFO("form ", int(form), ", n ", n, ", threads ", threads);
        const TensorView<float> x = make_view<float>(rng, Shape{rows, n}, positive, Layout::contiguous);
        TensorView<float> y = make_destination<float>(rng, x.shape(), Layout::contiguous);
        CHECK(fusion_log_of([&] { row_form_assign(form, y, x, -1); }).find("one row at a time") != std::string::npos);
        WEFT_CHECK_REPORT(check_output(y, row_form_expecter(form, x, 1)));
        if (n > 1000) continue;
        const TensorView<bfloat16> h = make_view<bfloat16>(rng, Shape{rows, n}, positive, Layout::contiguous);
        Tensor<bfloat16> z;
        CHECK(row_ran_fused([&] { row_form_assign(form, z, h, 1); }));
        WEFT_CHECK_REPORT(check_output(z, row_form_expecter(form, h, 1)));
      }
    // Along dim 0 of a row-major input (the block path), rows longer than a block: blocks of one
    // row each.
    const TensorView<float> tall = make_view<float>(rng, Shape{140000, 3}, positive, Layout::contiguous);
    TensorView<float> y = make_destination<float>(rng, tall.shape(), Layout::contiguous);
    CHECK(fusion_log_of([&] { row_form_assign(RowForm::softmax, y, tall, 0); }).find("blocks of 1 rows") !=
          std::string::npos);
    WEFT_CHECK_REPORT(check_output(y, row_form_expecter(RowForm::softmax, tall, 0)));
    // var before mean (its mean computed once with the statement's), and std with no mean of the
    // statement's: the layer-norm formula's values either way.
    const TensorView<float> x = make_view<float>(rng, Shape{29, 257}, Domain{}, Layout::contiguous);
    Tensor<float> ln, scaled;
    CHECK(row_ran_fused(
        [&] { ln = weft::rsqrt(weft::var(x, 1, 0.0, true) + 1e-5) * (x - weft::mean(x, 1, true)); }));
    WEFT_CHECK_REPORT(check_output(ln, row_form_expecter(RowForm::layer_norm, x, 1)));
    CHECK(row_ran_fused([&] { scaled = x / weft::sqrt(weft::square(weft::std(x, 1, 0.0, true)) + 1e-5); }));
    WEFT_CHECK_REPORT(check_output(scaled, [&](const std::vector<std::int64_t>& idx) {
      const RowStats st = row_stats(row_values(x, idx, 1));
      Expect e;
      e.want = value_at(x, idx) / std::sqrt(st.var + 1e-5);
      // var's relative error (n eps, and the mean's), halved by the root, and the root's and square's roundings
      e.tol = (st.n + 16) * eps_of<float>() * std::fabs(e.want) + 4 * ulp_of<float>(e.want);
      return e;
    }));
  }
  weft::set_num_threads(threads_before);
}

TEST_CASE("row epilogue: statements of a value per row (logsumexp, a scaled norm plus a per-row tensor), row and block paths") {
  WEFT_TEST_RNG(rng);
  const int threads_before = weft::get_num_threads();
  for (const int threads : {1, 2}) {
    weft::set_num_threads(threads);
    for (int rep = 0; rep < 16; ++rep) {
      const Shape shape = random_shape(rng, 1, 4, 3000);
      const int rank = shape.rank();
      const std::int64_t dim = rng.integer(-rank, rank - 1);
      const int d = int(dim < 0 ? dim + rank : dim);
      if (shape.numel() == 0 || shape[d] == 0) continue;
      Shape values_shape = shape;
      values_shape[std::size_t(d)] = 1;
      const TensorView<float> x = make_view<float>(rng, shape, Domain{}, random_layout(rng, false));
      const TensorView<float> bias = make_view<float>(rng, values_shape, Domain{}, random_layout(rng, false));
      TensorView<float> lse = make_destination<float>(rng, values_shape, random_layout(rng, true));
      TensorView<float> norm = make_destination<float>(rng, values_shape, random_layout(rng, true));
      INFO("shape ", shape_str(shape), ", dim ", dim, ", strides ", shape_str(x.strides()), ", threads ", threads);
      // Fused at least where there are as many rows as threads (with fewer, the reductions may run
      // first: they split long rows among the threads).
      const bool fused_lse = row_ran_fused([&] {
        lse = weft::amax(x, dim, true) + weft::log(weft::sum(weft::exp(x - weft::amax(x, dim, true)), dim, true));
      });
      const bool fused_norm = row_ran_fused([&] { norm = weft::sqrt(weft::sum(x * x, dim, true)) * 0.5f + bias; });
      if (shape.numel() / shape[d] >= threads) CHECK((fused_lse && fused_norm));
      const double eps = eps_of<float>();
      WEFT_CHECK_REPORT(check_output(lse, [&](const std::vector<std::int64_t>& idx) {
        const RowStats st = row_stats(row_values(x, idx, d));
        Expect e;
        e.want = st.mx + std::log(st.exp_sum);
        // the sum of exp's relative error (n eps) is log's absolute error, plus m's rounding in m + log
        e.tol = (st.n + 16) * eps + 4 * ulp_of<float>(e.want);
        return e;
      }));
      WEFT_CHECK_REPORT(check_output(norm, [&](const std::vector<std::int64_t>& idx) {
        const std::vector<double> row = row_values(x, idx, d);
        double sq = 0;
        for (double r : row) sq += r * r;
        Expect e;
        const double b = value_at(bias, idx);
        e.want = std::sqrt(sq) * 0.5 + b;
        e.tol = (double(row.size()) + 8) * eps * std::sqrt(sq) + 4 * ulp_of<float>(std::fabs(e.want) + std::fabs(b));
        return e;
      }));
    }
  }
  weft::set_num_threads(threads_before);
}

TEST_CASE("row epilogue: statements it does not take give the values of the ops one by one") {
  WEFT_TEST_RNG(rng);
  Domain positive;
  positive.lo = 0.5, positive.hi = 2;
  const TensorView<float> x = make_view<float>(rng, Shape{6, 50}, positive, Layout::contiguous);
  const std::vector<double> v = values_of(x);
  auto row_sum = [&](std::int64_t r) {
    double s = 0;
    for (std::int64_t j = 0; j < 50; ++j) s += v[std::size_t(r * 50 + j)];
    return s;
  };
  // keepdim false: the sums broadcast along the last dim of a [50, 6] statement, staged.
  const TensorView<float> xt = x.transpose(0, 1);
  Tensor<float> y;
  CHECK_FALSE(row_ran_fused([&] { y = xt / weft::sum(x, 1); }));
  WEFT_CHECK_REPORT(check_output(y, [&](const std::vector<std::int64_t>& idx) {
    Expect e;
    e.want = value_at(xt, idx) / row_sum(idx[1]);
    e.tol = 64 * eps_of<float>() * std::fabs(e.want);
    return e;
  }));
  // Several dims, and a destination that overlaps the input other than elementwise.
  Tensor<float> total;
  CHECK_FALSE(row_ran_fused([&] { total = x / weft::sum(x, {0, 1}, true); }));
  double all = 0;
  for (double a : v) all += a;
  WEFT_CHECK_REPORT(check_output(total, [&](const std::vector<std::int64_t>& idx) {
    Expect e;
    e.want = value_at(x, idx) / all;
    e.tol = 400 * eps_of<float>() * std::fabs(e.want);
    return e;
  }));
  Tensor<float> square = weft::eval(weft::cast<float>(make_view<float>(rng, Shape{20, 20}, positive, Layout::contiguous)));
  const Tensor<float> before = weft::eval(square);
  CHECK_FALSE(row_ran_fused([&] { square.view() = square.transpose(0, 1) / weft::sum(square.transpose(0, 1), 1, true); }));
  WEFT_CHECK_REPORT(check_output(square, row_form_expecter(RowForm::normalize, before.view().transpose(0, 1), 1)));
}

TEST_CASE("row epilogue: a reduction assigned alone writes its destination, allocating nothing") {
  WEFT_TEST_RNG(rng);
  const TensorView<float> x = make_view<float>(rng, Shape{33, 70}, Domain{}, Layout::permuted);
  auto expect_sum = [&](std::int64_t r, double scale) {
    double s = 0, a = 0;
    for (std::int64_t j = 0; j < 70; ++j) s += value_at(x, {r, j}), a += std::fabs(value_at(x, {r, j}));
    Expect e;
    e.want = s * scale;
    e.tol = 72 * eps_of<float>() * a * scale;
    return e;
  };
  Tensor<float> y = weft::zeros<float>(Shape{33});
  poison(y);
  const std::int64_t before = weft::detail::tensor_counters().allocations.load();
  y = weft::sum(x, 1);
  CHECK(weft::detail::tensor_counters().allocations.load() == before);
  WEFT_CHECK_REPORT(check_output(y, [&](const std::vector<std::int64_t>& idx) { return expect_sum(idx[0], 1); }));
  TensorView<float> m = make_destination<float>(rng, Shape{33, 1}, Layout::strided);  // not contiguous: copied in
  m = weft::mean(x, -1, true);
  WEFT_CHECK_REPORT(check_output(m, [&](const std::vector<std::int64_t>& idx) { return expect_sum(idx[0], 1.0 / 70); }));
  // The destination inside the input: the reduction goes to a new tensor first.
  Tensor<float> z = weft::eval(weft::cast<float>(x));
  const Tensor<float> z0 = weft::eval(z);
  TensorView<float> col = z.select(1, 0);
  col = weft::amax(z, 1);
  for (std::int64_t r = 0; r < 33; ++r) {
    double mx = -INFINITY;
    for (std::int64_t j = 0; j < 70; ++j) mx = std::max(mx, value_at(z0, {r, j}));
    CHECK(value_at(z, {r, 0}) == mx);
    for (std::int64_t j = 1; j < 70; ++j) CHECK(value_at(z, {r, j}) == value_at(z0, {r, j}));
  }
}

TEST_CASE("row epilogue: an operand that does not broadcast with a reduction's result names the reduction") {
  WEFT_TEST_RNG(rng);
  const TensorView<float> x = make_view<float>(rng, Shape{4, 6}, Domain{}, Layout::strided);
  TensorView<float> y = make_destination<float>(rng, Shape{4, 6}, Layout::contiguous);
  const std::vector<unsigned char> before = storage_snapshot(y);
  // sum(x, 1) is [4]: it does not broadcast with [4, 6]; keepdim would make it [4, 1].
  const std::string m = error_of([&] { y = x + weft::sum(x, 1); });
  CHECK(m ==
        "weft::sum epilogue: an operand of shape [4, 6] cannot be broadcast with sum's result of shape [4] (numpy rule: "
        "trailing dims must be equal or 1); the expression around sum reads every operand at the result's elements: "
        "give it a shape that broadcasts with [4], or keep the reduced dims as size 1 (keepdim = true)");
  CHECK(storage_snapshot(y) == before);
}

}  // TEST_SUITE

// SPDX-License-Identifier: MIT
/// @file cpu: nn::layer_norm_backward against a double-precision reference of its formula (random shapes,
/// normalized dims and layouts, every floating dtype, a large mean), finite differences of weft::layer_norm in
/// double, the same bits for any thread count, empty inputs and every error.
#include <memory>

#include <weft/ops/layer_norm.hpp>
#include <weft/backend/threads.hpp>
#include <weft/nn/layer_norm_backward.hpp>

#include "dense_reference.hpp"
#include "error_check.hpp"
#include "reference.hpp"

using namespace weft_test;
using weft::Device;

namespace {

struct Reference {
  std::vector<Expect> dx, dw, db;
};

/// The gradients in double, with the bounds of a run in precision eps: the row statistics are
/// sums of n terms ((n / 4 + 20) eps relative to the sum of |terms|: a few packet accumulators), the
/// weight and bias gradients sums over the rows in blocks ((rows / 64 + 80) eps: at most 64 blocks
/// of at least 8 rows, added in order), the rest a few roundings, then the rounding to T.
template <class T>
Reference layer_norm_backward_reference(const std::vector<double>& dy, const std::vector<double>& x,
                                        const std::vector<double>& w, std::int64_t n, double eps_ln) {
  constexpr double eps = compute_eps<T>();
  const std::size_t rows = x.size() / std::size_t(n), un = std::size_t(n);
  const double rel = (double(n) / 4 + 20) * eps;
  const double rel_cols = (double(rows) / 64 + 80) * eps;
  Reference out;
  out.dx.resize(x.size());
  std::vector<CompensatedSum> dw(un), db(un), dw_mag(un), dw_err(un), db_mag(un);
  for (std::size_t r = 0; r < rows; ++r) {
    const double* xr = x.data() + r * un;
    const double* dyr = dy.data() + r * un;
    CompensatedSum sum, sum_abs;
    for (std::size_t i = 0; i < un; ++i) sum.add(xr[i]), sum_abs.add(std::fabs(xr[i]));
    const double mean = sum.value() / double(n);
    CompensatedSum sq;
    for (std::size_t i = 0; i < un; ++i) sq.add((xr[i] - mean) * (xr[i] - mean));
    const double var = sq.value() / double(n);
    const double rstd = 1 / std::sqrt(var + eps_ln);
    const double mean_err = rel * sum_abs.value() / double(n);
    // var's relative error: its sum's, plus the mean's error moving every deviation
    const double dev_rel = var > 0 ? 2 * mean_err * std::sqrt(var) / var : 0;
    const double rstd_rel = (rel + 4 * eps + dev_rel) / 2 + 2 * eps;
    CompensatedSum sg, sgx, sg_abs, sgx_abs;
    for (std::size_t i = 0; i < un; ++i) {
      const double g = dyr[i] * w[i], xhat = (xr[i] - mean) * rstd;
      sg.add(g), sgx.add(g * xhat), sg_abs.add(std::fabs(g)), sgx_abs.add(std::fabs(g * xhat));
    }
    const double mg = sg.value() / double(n), mgx = sgx.value() / double(n);
    const double mg_err = (rel * sg_abs.value() + eps * sg_abs.value()) / double(n);
    const double mgx_err = (rel + rstd_rel + 4 * eps) * sgx_abs.value() / double(n) + mean_err * rstd * sg_abs.value() / double(n);
    for (std::size_t i = 0; i < un; ++i) {
      const double g = dyr[i] * w[i], xhat = (xr[i] - mean) * rstd;
      const double xhat_err = std::fabs(xhat) * (rstd_rel + 2 * eps) + mean_err * rstd;
      Expect& e = out.dx[r * un + i];
      e.want = rstd * (g - mg - xhat * mgx);
      e.tol = rstd * (mg_err + std::fabs(xhat) * mgx_err + std::fabs(mgx) * xhat_err +
                      4 * eps * (std::fabs(g) + std::fabs(mg) + std::fabs(xhat * mgx))) +
              std::fabs(e.want) * rstd_rel + ulp_of<T>(e.want);
      dw[i].add(dyr[i] * xhat), dw_mag[i].add(std::fabs(dyr[i] * xhat)), dw_err[i].add(std::fabs(dyr[i]) * xhat_err);
      db[i].add(dyr[i]), db_mag[i].add(std::fabs(dyr[i]));
    }
  }
  for (std::size_t i = 0; i < un; ++i) {
    Expect w_e, b_e;
    w_e.want = dw[i].value();
    w_e.tol = dw_err[i].value() + (rel_cols + 2 * eps) * dw_mag[i].value() + ulp_of<T>(w_e.want);
    b_e.want = db[i].value();
    b_e.tol = rel_cols * db_mag[i].value() + ulp_of<T>(b_e.want);
    out.dw.push_back(w_e), out.db.push_back(b_e);
  }
  return out;
}

template <class T>
void check_layer_norm_backward(Rng& rng, const Shape& shape, int norm_rank, double eps_ln, const Domain& dom = Domain{}) {
  const Shape ws(shape.end() - norm_rank, shape.end());
  const TensorView<T> x = make_view<T>(rng, shape, dom, random_layout(rng, false));
  const TensorView<T> dy = make_view<T>(rng, shape, Domain{-2, 2}, random_layout(rng, false));
  const TensorView<T> w = make_view<T>(rng, ws, Domain{0.5, 2}, random_layout(rng, false));
  const std::string what = std::string(type_name<T>()) + ", x " + shape_str(shape) + ", weight " + shape_str(ws) +
                           ", eps " + std::to_string(eps_ln);
  INFO(what);
  const weft::nn::LayerNormGradients<T> g = weft::nn::layer_norm_backward(dy, x, w, eps_ln);
  REQUIRE(g.dx.shape() == shape);
  REQUIRE(g.dweight.shape() == ws);
  REQUIRE(g.dbias.shape() == ws);
  if (ws.numel() == 0) return;
  const Reference want =
      layer_norm_backward_reference<T>(values_of(dy), values_of(x), values_of(w), ws.numel(), eps_ln);
  WEFT_CHECK_REPORT(check_output(g.dx, want.dx));
  WEFT_CHECK_REPORT(check_output(g.dweight, want.dw));
  WEFT_CHECK_REPORT(check_output(g.dbias, want.db));
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE_TEMPLATE("nn::layer_norm_backward: random shapes, normalized dims and layouts", T, float, double, half,
                   bfloat16) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 16; ++iter) {
    const Shape shape = random_shape(rng, 1, 4, 4000);
    const int norm_rank = int(rng.integer(1, shape.rank()));
    check_layer_norm_backward<T>(rng, shape, norm_rank, rng.chance(0.5) ? 1e-5 : 0.1);
  }
}

TEST_CASE("nn::layer_norm_backward: GPT-2's rows, long rows, many rows and a large mean") {
  WEFT_TEST_RNG(rng);
  check_layer_norm_backward<float>(rng, Shape{4, 64, 768}, 1, 1e-5);
  check_layer_norm_backward<float>(rng, Shape{3, 5000}, 1, 1e-5);
  check_layer_norm_backward<float>(rng, Shape{3000, 5}, 1, 1e-5);
  check_layer_norm_backward<bfloat16>(rng, Shape{700, 33}, 1, 1e-5);
  check_layer_norm_backward<float>(rng, Shape{8, 256}, 1, 1e-5, Domain{999, 1001});
}

TEST_CASE("nn::layer_norm_backward: finite differences of weft::layer_norm in double") {
  WEFT_TEST_RNG(rng);
  const Shape shape{3, 2, 4}, ws{2, 4};
  Tensor<double> x = random_contiguous<double>(rng, shape, Domain{-2, 2});
  Tensor<double> w = random_contiguous<double>(rng, ws, Domain{0.5, 2});
  Tensor<double> b = random_contiguous<double>(rng, ws, Domain{-1, 1});
  const Tensor<double> dy = random_contiguous<double>(rng, shape, Domain{-1, 1});
  const std::vector<double> dyv = values_of(dy);
  // L = sum(layer_norm(x, w, b) * dy), whose gradients are what layer_norm_backward returns for dy.
  auto loss = [&] {
    const std::vector<double> y = values_of(weft::layer_norm(x, w, b, 0.01));
    CompensatedSum s;
    for (std::size_t k = 0; k < y.size(); ++k) s.add(y[k] * dyv[k]);
    return s.value();
  };
  const weft::nn::LayerNormGradients<double> g = weft::nn::layer_norm_backward(dy, x, w, 0.01);
  auto check = [&](Tensor<double>& t, const Tensor<double>& grad, const char* name) {
    const std::vector<double> want = values_of(grad);
    for (std::int64_t k = 0; k < t.numel(); ++k) {
      const double h = 1e-5, v = t.data()[k];
      t.data()[k] = v + h;
      const double up = loss();
      t.data()[k] = v - h;
      const double down = loss();
      t.data()[k] = v;
      INFO(name, " element ", k);
      CHECK(std::fabs((up - down) / (2 * h) - want[std::size_t(k)]) <= 1e-8);
    }
  };
  check(x, g.dx, "dx");
  check(w, g.dweight, "dweight");
  check(b, g.dbias, "dbias");
}

TEST_CASE("nn::layer_norm_backward: the same bits for any thread count") {
  WEFT_TEST_RNG(rng);
  const Tensor<float> x = random_contiguous<float>(rng, Shape{300, 97}, Domain{-3, 3});
  const Tensor<float> dy = random_contiguous<float>(rng, Shape{300, 97}, Domain{-3, 3});
  const Tensor<float> w = random_contiguous<float>(rng, Shape{97}, Domain{0.5, 2});
  const int before = weft::get_num_threads();
  std::vector<std::vector<double>> runs;
  for (int threads : {1, 2, 3}) {
    weft::set_num_threads(threads);
    const weft::nn::LayerNormGradients<float> g = weft::nn::layer_norm_backward(dy, x, w);
    std::vector<double> all = values_of(g.dx);
    for (double v : values_of(g.dweight)) all.push_back(v);
    for (double v : values_of(g.dbias)) all.push_back(v);
    runs.push_back(all);
  }
  weft::set_num_threads(before);
  CHECK(runs[0] == runs[1]);
  CHECK(runs[0] == runs[2]);
}

TEST_CASE("nn::layer_norm_backward: empty inputs") {
  // No rows: dx is empty, dweight and dbias are sums of nothing (zeros).
  const weft::nn::LayerNormGradients<float> g = weft::nn::layer_norm_backward(
      weft::zeros<float>(Shape{0, 6}), weft::zeros<float>(Shape{0, 6}), weft::ones<float>(Shape{6}));
  CHECK(g.dx.shape() == Shape{0, 6});
  CHECK(values_of(g.dweight) == std::vector<double>(6, 0.0));
  CHECK(values_of(g.dbias) == std::vector<double>(6, 0.0));
  // An empty normalized shape.
  const weft::nn::LayerNormGradients<float> e = weft::nn::layer_norm_backward(
      weft::zeros<float>(Shape{3, 0}), weft::zeros<float>(Shape{3, 0}), weft::ones<float>(Shape{0}));
  CHECK(e.dx.shape() == Shape{3, 0});
  CHECK(e.dweight.shape() == Shape{0});
}

TEST_CASE("nn::layer_norm_backward: errors name the op and the shapes; nothing is allocated") {
  const Tensor<float> x = weft::zeros<float>(Shape{2, 3, 5}), dy = weft::zeros<float>(Shape{2, 3, 5});
  const Tensor<float> w4 = weft::ones<float>(Shape{4}), w5 = weft::ones<float>(Shape{5}), w35 = weft::ones<float>(Shape{3, 5});
  const Tensor<float> wide = weft::ones<float>(Shape{1, 2, 3, 5}), dy_bad = weft::zeros<float>(Shape{2, 3, 4});
  auto fake = std::make_shared<weft::Storage>(nullptr, 0, Device::cuda(), nullptr);
  const weft::TensorView<float> gpu(fake, Shape{5}, weft::contiguous_strides(Shape{5}), 0);
  auto& counters = weft::detail::tensor_counters();
  const std::int64_t allocations = counters.allocations.load();
  std::string m = error_of([&] { weft::nn::layer_norm_backward(dy, x, w4); });
  CHECK(has(m, "weft::nn::layer_norm_backward"));
  CHECK(has(m, "x of shape [2, 3, 5]"));
  CHECK(has(m, "weight's shape [4]"));
  m = error_of([&] { weft::nn::layer_norm_backward(dy, x, wide); });
  CHECK(has(m, "[1, 2, 3, 5]"));
  m = error_of([&] { weft::nn::layer_norm_backward(dy_bad, x, w35); });
  CHECK(has(m, "dy of shape [2, 3, 4]"));
  CHECK(has(m, "x's shape [2, 3, 5]"));
  m = error_of([&] { weft::nn::layer_norm_backward(dy, x, w5, -1.0); });
  CHECK(has(m, "eps"));
  m = error_of([&] { weft::nn::layer_norm_backward(dy, x, Tensor<float>()); });
  CHECK(has(m, "weight is an empty"));
  m = error_of([&] { weft::nn::layer_norm_backward(dy, x, gpu); });
  CHECK(has(m, "cuda:0"));
  CHECK(has(m, "[2, 3, 5]"));
  CHECK(counters.allocations.load() == allocations);
}

}  // TEST_SUITE

// SPDX-License-Identifier: MIT
/// @file cuda: nn::cross_entropy and its backward (short and long rows, a padded vocabulary read and written through
/// its row stride), gelu_tanh and the GELU gradients (the pointwise kernel), nn::layer_norm_backward (warp and block
/// rows) on a GPU against double-precision host references. Skipped at run time without a CUDA device.
#include <doctest/doctest.h>

#include <weft/ops/factories.hpp>
#include <weft/ops/fuse.hpp>
#include <weft/nn/cross_entropy.hpp>
#include <weft/nn/gelu.hpp>
#include <weft/nn/layer_norm_backward.hpp>

#include "backend/cuda/gpu_inputs.hpp"
#include "dense_reference.hpp"

using namespace gpu_inputs;
using weft::test::cuda_available;
using weft::nn::Reduction;

namespace {

/// Per row of x (rows x n, row-major): m, log s and the softmax, in double.
struct SoftmaxRows {
  std::vector<double> log_s, m;
};
SoftmaxRows softmax_rows(const std::vector<double>& x, std::int64_t rows, std::int64_t n) {
  SoftmaxRows out;
  for (std::int64_t r = 0; r < rows; ++r) {
    double m = -INFINITY;
    for (std::int64_t j = 0; j < n; ++j) m = std::max(m, x[std::size_t(r * n + j)]);
    CompensatedSum s;
    for (std::int64_t j = 0; j < n; ++j) s.add(std::exp(x[std::size_t(r * n + j)] - m));
    out.m.push_back(m);
    out.log_s.push_back(std::log(s.value()));
  }
  return out;
}

}  // namespace

TEST_SUITE("cuda") {

TEST_CASE("cuda nn::cross_entropy and cross_entropy_backward" * doctest::skip(!cuda_available())) {
  WEFT_TEST_RNG(rng);
  // Rows of n = 37 (a warp each) and n = 50257 of a padded 50304 (a block each, read through the stride).
  for (const auto& [rows, n, padded] : {std::tuple<std::int64_t, std::int64_t, std::int64_t>{9, 37, 37},
                                        std::tuple<std::int64_t, std::int64_t, std::int64_t>{5, 50257, 50304}}) {
    const Tensor<float> host = random_contiguous<float>(rng, Shape{rows, padded}, Domain{-20, 20});
    const weft::TensorView<const float> x = host.to(gpu).view().narrow(-1, 0, n);
    std::vector<std::int64_t> tv;
    for (std::int64_t r = 0; r < rows; ++r) tv.push_back(rng.integer(0, n - 1));
    const Tensor<std::int64_t> t = weft::from_vector<std::int64_t>(tv).to(gpu);
    const std::vector<double> xv = values_of(host.view().narrow(-1, 0, n));
    const SoftmaxRows sm = softmax_rows(xv, rows, n);
    INFO("rows ", rows, " n ", n);
    // exp within a few ulps, sums n / 256 deep per thread then a tree: relative (n / 256 + 32) eps
    const double rel = (double(n) / 256 + 32) * kEps;
    const std::vector<double> loss = values_of(weft::nn::cross_entropy(x, t, Reduction::none).to(Device::cpu()));
    CompensatedSum total;
    for (std::int64_t r = 0; r < rows; ++r) {
      const double shift = xv[std::size_t(r * n + tv[std::size_t(r)])] - sm.m[std::size_t(r)];
      const double want = sm.log_s[std::size_t(r)] - shift;
      total.add(want);
      CHECK(std::fabs(loss[std::size_t(r)] - want) <= rel + 4 * kEps * (std::fabs(shift) + std::fabs(want)));
    }
    const double mean = values_of(weft::nn::cross_entropy(x, t).to(Device::cpu()))[0];
    CHECK(std::fabs(mean - total.value() / double(rows)) <= rel + 8 * kEps * std::fabs(mean) + 40 * 20 * kEps);
    // The gradient into the first n columns of a padded gradient; the padding keeps its poison.
    Tensor<float> grad = weft::empty<float>(Shape{rows, padded}, gpu);
    weft::test::poison(grad);
    weft::nn::cross_entropy_backward(grad.view().narrow(-1, 0, n), 2.0, x, t, Reduction::sum);
    const Tensor<float> back = grad.to(Device::cpu());
    const std::vector<double> gv = values_of(back.view().narrow(-1, 0, n));
    int wrong = 0;
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < n; ++j) {
        const std::size_t k = std::size_t(r * n + j);
        const double p = std::exp(xv[k] - sm.m[std::size_t(r)] - sm.log_s[std::size_t(r)]);
        const double want = 2 * (p - (j == tv[std::size_t(r)] ? 1 : 0));
        wrong += !(std::fabs(gv[k] - want) <= 2 * (p * (rel + 20 * 4 * kEps) + 4 * kEps) + 1e-44);
      }
    CHECK(wrong == 0);
    if (padded > n) CHECK(std::isnan(values_of(back.view().narrow(-1, n, padded - n))[0]));
  }
  // 16-bit logits accumulate in float.
  const Tensor<weft::half> h = random_contiguous<weft::half>(rng, Shape{4, 300}, Domain{-4, 4});
  const Tensor<std::int32_t> t = weft::from_vector<std::int32_t>({0, 299, 7, 150});
  const std::vector<double> hv = values_of(h);
  const SoftmaxRows sm = softmax_rows(hv, 4, 300);
  const std::vector<double> loss = values_of(weft::nn::cross_entropy(h.to(gpu), t.to(gpu), Reduction::none).to(Device::cpu()));
  const std::vector<std::int64_t> tv{0, 299, 7, 150};
  for (std::size_t r = 0; r < 4; ++r) {
    const double want = sm.log_s[r] - (hv[r * 300 + std::size_t(tv[r])] - sm.m[r]);
    CHECK(std::fabs(loss[r] - want) <= 64 * kEps * 8 + ulp_of<weft::half>(want));
  }
}

TEST_CASE("cuda gelu_tanh, nn::gelu_backward, nn::gelu_tanh_backward" * doctest::skip(!cuda_available())) {
  WEFT_TEST_RNG(rng);
  const Shape s{33, 65};
  const Tensor<float> xh = random_contiguous<float>(rng, s, Domain{-6, 6});
  const Tensor<float> dyh = random_contiguous<float>(rng, s, Domain{-2, 2});
  const Tensor<float> x = xh.to(gpu), dy = dyh.to(gpu);
  Tensor<float> y = weft::empty<float>(s, gpu), de = weft::empty<float>(s, gpu), dt = weft::empty<float>(s, gpu);
  weft::fuse(weft::assign(y, weft::gelu_tanh(x)), weft::assign(de, weft::nn::gelu_backward(dy, x)),
             weft::assign(dt, weft::nn::gelu_tanh_backward(dy, x)));
  const std::vector<double> xv = values_of(xh), dv = values_of(dyh), yv = values_of(y.to(Device::cpu())),
                            ev = values_of(de.to(Device::cpu())), tv = values_of(dt.to(Device::cpu()));
  int wrong = 0;
  for (std::size_t k = 0; k < xv.size(); ++k) {
    const double v = xv[k], u = 0.79788456080286535588 * (v + 0.044715 * v * v * v), th = std::tanh(u);
    const double gelu_tanh = 0.5 * v * (1 + th);
    const double d_tanh = 0.5 * (1 + th) + 0.5 * v * (1 - th * th) * 0.79788456080286535588 * (1 + 3 * 0.044715 * v * v);
    const double d_exact = 0.5 * (1 + std::erf(v / std::sqrt(2.0))) + v * std::exp(-0.5 * v * v) / std::sqrt(2 * M_PI);
    // a few float roundings on arguments up to |u| ~ 10 and on the terms
    const double tol = 64 * kEps * (1 + std::fabs(v) + std::fabs(u));
    wrong += !(std::fabs(yv[k] - gelu_tanh) <= tol * (1 + std::fabs(v)));
    wrong += !(std::fabs(tv[k] - dv[k] * d_tanh) <= tol * std::fabs(dv[k]) * (1 + v * v));
    wrong += !(std::fabs(ev[k] - dv[k] * d_exact) <= tol * std::fabs(dv[k]) * (1 + v * v));
  }
  CHECK(wrong == 0);
}

TEST_CASE("cuda nn::layer_norm_backward" * doctest::skip(!cuda_available())) {
  WEFT_TEST_RNG(rng);
  for (const Shape& s : {Shape{6, 40}, Shape{3, 3000}, Shape{300, 7}}) {
    const Tensor<float> xh = random_contiguous<float>(rng, s, Domain{-3, 3});
    const Tensor<float> dyh = random_contiguous<float>(rng, s, Domain{-2, 2});
    const Tensor<float> wh = random_contiguous<float>(rng, Shape{s[1]}, Domain{0.5, 2});
    const weft::nn::LayerNormGradients<float> g = weft::nn::layer_norm_backward(dyh.to(gpu), xh.to(gpu), wh.to(gpu));
    const std::vector<double> xv = values_of(xh), dv = values_of(dyh), wv = values_of(wh);
    const std::vector<double> dx = values_of(g.dx.to(Device::cpu())), dw = values_of(g.dweight.to(Device::cpu())),
                              db = values_of(g.dbias.to(Device::cpu()));
    const std::int64_t rows = s[0], n = s[1];
    std::vector<double> dw_want(std::size_t(n), 0.0), db_want(std::size_t(n), 0.0), mag(std::size_t(n), 0.0);
    int wrong = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
      const double* xr = xv.data() + r * n;
      const double* dyr = dv.data() + r * n;
      CompensatedSum sum, sq, sg, sgx;
      for (std::int64_t i = 0; i < n; ++i) sum.add(xr[i]);
      const double mean = sum.value() / double(n);
      for (std::int64_t i = 0; i < n; ++i) sq.add((xr[i] - mean) * (xr[i] - mean));
      const double rstd = 1 / std::sqrt(sq.value() / double(n) + 1e-5);
      for (std::int64_t i = 0; i < n; ++i) sg.add(dyr[i] * wv[std::size_t(i)]), sgx.add(dyr[i] * wv[std::size_t(i)] * (xr[i] - mean) * rstd);
      const double mg = sg.value() / double(n), mgx = sgx.value() / double(n);
      for (std::int64_t i = 0; i < n; ++i) {
        const double xhat = (xr[i] - mean) * rstd, gi = dyr[i] * wv[std::size_t(i)];
        const double want = rstd * (gi - mg - xhat * mgx);
        // row sums n / 256 (blocks) or n / 32 (warps) deep, then a tree; a few roundings on terms of size rstd * 2 * 2
        wrong += !(std::fabs(dx[std::size_t(r * n + i)] - want) <= (double(n) / 32 + 64) * kEps * rstd * 16);
        dw_want[std::size_t(i)] += dyr[i] * xhat, db_want[std::size_t(i)] += dyr[i];
        mag[std::size_t(i)] += std::fabs(dyr[i]) * (1 + std::fabs(xhat));
      }
    }
    for (std::int64_t i = 0; i < n; ++i) {  // a thread adds the rows in order: rows + a few roundings
      const double tol = (double(rows) + 32) * kEps * mag[std::size_t(i)];
      wrong += !(std::fabs(dw[std::size_t(i)] - dw_want[std::size_t(i)]) <= tol);
      wrong += !(std::fabs(db[std::size_t(i)] - db_want[std::size_t(i)]) <= tol);
    }
    INFO("shape ", shape_str(s));
    CHECK(wrong == 0);
  }
}

}  // TEST_SUITE

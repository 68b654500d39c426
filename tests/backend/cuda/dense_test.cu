// SPDX-License-Identifier: MIT
/// @file cuda: softmax / log_softmax, layer_norm and matmul (cuBLAS) on a GPU against
/// double-precision host references. Skipped at run time without a CUDA device.
#include <doctest/doctest.h>

#include <weft/ops/factories.hpp>
#include <weft/ops/layer_norm.hpp>
#include <weft/ops/matmul.hpp>
#include <weft/ops/softmax.hpp>
#include <weft/ops/fuse.hpp>
#include <weft/expr/operators.hpp>

#include "backend/cuda/gpu_inputs.hpp"
#include "dense_reference.hpp"

using namespace gpu_inputs;
using weft::test::cuda_available;

TEST_SUITE("cuda") {

TEST_CASE("cuda softmax, log_softmax, layer_norm" * doctest::skip(!cuda_available())) {
  WEFT_TEST_RNG(rng);
  // Per row: exp within a few ulps, a sum of n positive terms folded n / 32 deep per thread then a
  // tree (rows up to 1024 get a warp, longer ones 256 threads), one division, the rounding to T.
  const struct {
    Shape shape;
    int dim;
  } cases[] = {{{7, 37}, 1}, {{3, 5000}, -1}, {{40, 6}, 0}, {{5, 300, 9}, 1}, {{1}, 0}};
  for (const auto& c : cases) {
    for (bool log : {false, true}) {
      const weft::TensorView<float> x = on_gpu<float>(rng, c.shape, GpuLayout::contiguous);
      const std::vector<double> xv = values_of(x.to(Device::cpu()));
      INFO("shape ", shape_str(c.shape), " dim ", c.dim, std::string(log ? " log_softmax" : " softmax"));
      const Tensor<float> y = (log ? weft::log_softmax(x, c.dim) : weft::softmax(x, c.dim)).to(Device::cpu());
      const int d = c.dim < 0 ? c.dim + c.shape.rank() : c.dim;
      std::int64_t outer = 1, n = c.shape[d], inner = 1;
      for (int k = 0; k < c.shape.rank(); ++k) (k < d ? outer : inner) *= k == d ? 1 : c.shape[k];
      const std::vector<double> yv = values_of(y);
      for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t q = 0; q < inner; ++q) {
          double m = -INFINITY;
          for (std::int64_t i = 0; i < n; ++i) m = std::max(m, xv[std::size_t((o * n + i) * inner + q)]);
          CompensatedSum s;
          for (std::int64_t i = 0; i < n; ++i) s.add(std::exp(xv[std::size_t((o * n + i) * inner + q)] - m));
          const double rel = (double(n) / 32 + 24) * kEps;
          for (std::int64_t i = 0; i < n; ++i) {
            const std::size_t k = std::size_t((o * n + i) * inner + q);
            const double dlt = xv[k] - m;
            const double want = log ? dlt - std::log(s.value()) : std::exp(dlt) / s.value();
            const double tol = log ? (std::fabs(dlt) + std::fabs(std::log(s.value())) + std::fabs(want)) * 4 * kEps + rel
                                   : want * (std::fabs(dlt) * kEps + rel) + ulp_of<float>(want);
            CHECK(std::fabs(yv[k] - want) <= tol);
          }
        }
    }
  }
  // layer_norm: short rows (a warp) and long rows (a block), half and float.
  for (const Shape& s : {Shape{6, 40}, Shape{3, 3000}}) {
    const weft::TensorView<float> x = on_gpu<float>(rng, s, GpuLayout::contiguous);
    const weft::TensorView<float> w = on_gpu<float>(rng, Shape{s[1]}, GpuLayout::contiguous, Domain{0.5, 2});
    const weft::TensorView<float> b = on_gpu<float>(rng, Shape{s[1]}, GpuLayout::contiguous);
    const std::vector<double> xv = values_of(x.to(Device::cpu())), wv = values_of(w.to(Device::cpu())),
                              bv = values_of(b.to(Device::cpu()));
    const std::vector<double> yv = values_of(weft::layer_norm(x, w, b).to(Device::cpu()));
    const std::vector<double> hv =
        values_of(weft::layer_norm(weft::eval(weft::cast<weft::half>(x)), weft::eval(weft::cast<weft::half>(w)),
                                   weft::eval(weft::cast<weft::half>(b)))
                      .to(Device::cpu()));
    const std::int64_t n = s[1];
    for (std::int64_t r = 0; r < s[0]; ++r) {
      CompensatedSum sum, sq;
      for (std::int64_t i = 0; i < n; ++i) sum.add(xv[std::size_t(r * n + i)]);
      const double mean = sum.value() / double(n);
      for (std::int64_t i = 0; i < n; ++i) sq.add((xv[std::size_t(r * n + i)] - mean) * (xv[std::size_t(r * n + i)] - mean));
      const double rstd = 1 / std::sqrt(sq.value() / double(n) + 1e-5);
      for (std::int64_t i = 0; i < n; ++i) {
        const std::size_t k = std::size_t(r * n + i);
        const double want = (xv[k] - mean) * rstd * wv[std::size_t(i)] + bv[std::size_t(i)];
        // mean and variance: sums of n terms (n / 32 + 24) eps deep; the rest a few roundings
        const double tol = (double(n) / 32 + 32) * kEps * (std::fabs(want) + 4 * rstd * std::fabs(wv[std::size_t(i)]));
        CHECK(std::fabs(yv[k] - want) <= tol);
        // half inputs: x, w, b were rounded to half first (so compare loosely), output rounded to half
        CHECK(std::fabs(hv[k] - want) <= 8 * 0x1p-10 * (std::fabs(want) + 4 * rstd * std::fabs(wv[std::size_t(i)])));
      }
    }
  }
}

TEST_CASE("cuda matmul: cuBLAS, batch broadcasting, transposed operands, dtypes" * doctest::skip(!cuda_available())) {
  WEFT_TEST_RNG(rng);
  auto check = [&](auto tag, const Shape& sa, const Shape& sb, GpuLayout la, GpuLayout lb, double eps) {
    using T = decltype(tag);
    const weft::TensorView<T> a = on_gpu<T>(rng, sa, la), b = on_gpu<T>(rng, sb, lb);
    const Tensor<T> c = weft::matmul(a, b);
    CHECK(c.device() == gpu);
    // The CPU's matmul of the same values is itself checked against a double reference
    // (tests/ops/matmul*_test.cpp); here the GPU result is compared with a double loop directly.
    const Tensor<T> ha = a.to(Device::cpu()), hb = b.to(Device::cpu()), hc = c.to(Device::cpu());
    INFO("a ", shape_str(sa), " b ", shape_str(sb), " dtype ", type_name<T>());
    const std::int64_t k = sa[sa.rank() - 1];
    const std::int64_t n = sa.rank() == 1 ? 1 : sa[sa.rank() - 2], m = sb.rank() == 1 ? 1 : sb[sb.rank() - 1];
    Shape batch;
    REQUIRE(broadcast_shapes({Shape(sa.begin(), sa.end() - std::min(sa.rank(), 2)),
                              Shape(sb.begin(), sb.end() - std::min(sb.rank(), 2))},
                             batch));
    const std::vector<double> cv = values_of(hc);
    std::size_t at = 0;
    for_each_index(batch, [&](const std::vector<std::int64_t>& bi) {
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < m; ++j, ++at) {
          CompensatedSum dot, mag;
          for (std::int64_t kk = 0; kk < k; ++kk) {
            std::vector<std::int64_t> ia = bi, ib = bi;
            if (sa.rank() > 1) ia.push_back(i);
            ia.push_back(kk);
            ib.push_back(kk);
            if (sb.rank() > 1) ib.push_back(j);
            if (sa.rank() == 1) ia = {kk};
            if (sb.rank() == 1) ib = {kk};
            const double x = value_at(ha, ia) * value_at(hb, ib);
            dot.add(x);
            mag.add(std::fabs(x));
          }
          CHECK(std::fabs(cv[at] - dot.value()) <= double(k + 2) * eps * mag.value() + ulp_of<T>(dot.value()));
        }
    });
  };
  check(float{}, Shape{33, 65}, Shape{65, 17}, GpuLayout::contiguous, GpuLayout::transposed, kEps);
  check(float{}, Shape{4, 1, 8, 12}, Shape{3, 12, 5}, GpuLayout::contiguous, GpuLayout::contiguous, kEps);  // broadcast
  check(float{}, Shape{2, 3, 7, 12}, Shape{12, 5}, GpuLayout::strided, GpuLayout::contiguous, kEps);  // shared b
  check(float{}, Shape{12}, Shape{12}, GpuLayout::contiguous, GpuLayout::contiguous, kEps);             // dot
  check(float{}, Shape{5, 12}, Shape{12}, GpuLayout::transposed, GpuLayout::contiguous, kEps);
  check(double{}, Shape{3, 40, 30}, Shape{3, 30, 20}, GpuLayout::transposed, GpuLayout::strided, 0x1p-52);
  check(weft::half{}, Shape{64, 128}, Shape{128, 32}, GpuLayout::contiguous, GpuLayout::contiguous, kEps);
  check(weft::bfloat16{}, Shape{2, 16, 64}, Shape{64, 24}, GpuLayout::contiguous, GpuLayout::transposed, kEps);
  // k = 0 gives zeros; integers are refused (cuBLAS has no integer GEMM).
  CHECK(values_of(weft::eval(weft::matmul(weft::zeros<float>(Shape{2, 0}, gpu), weft::zeros<float>(Shape{0, 3}, gpu)))
                      .to(Device::cpu())) == std::vector<double>(6, 0.0));
  const Tensor<std::int32_t> ints = weft::zeros<std::int32_t>(Shape{2, 2}, gpu);
  CHECK_THROWS_WITH_AS(weft::eval(weft::matmul(ints, ints)), doctest::Contains("cuBLAS has no integer GEMM"), weft::Error);
  // A pointwise expression around a CUDA matmul (the product first, then one kernel): against the
  // CPU's statement on the same values (itself checked in tests/ops/matmul_epilogue_test.cpp).
  const weft::TensorView<float> x = on_gpu<float>(rng, Shape{70, 48}, GpuLayout::contiguous);
  const weft::TensorView<float> w = on_gpu<float>(rng, Shape{90, 48}, GpuLayout::contiguous);
  const weft::TensorView<float> bias = on_gpu<float>(rng, Shape{90}, GpuLayout::contiguous);
  const Tensor<float> y = weft::gelu(weft::matmul(x, w.transpose(0, 1)) + bias);
  const Tensor<float> hx = x.to(Device::cpu()), hw = w.to(Device::cpu()), hbias = bias.to(Device::cpu());
  const Tensor<float> want = weft::gelu(weft::matmul(hx, hw.transpose(0, 1)) + hbias);
  const std::vector<double> got = values_of(y.to(Device::cpu())), expect = values_of(want);
  REQUIRE(got.size() == expect.size());
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(std::fabs(got[i] - expect[i]) <= 50 * kEps * (1 + std::fabs(expect[i])));
}

}  // TEST_SUITE

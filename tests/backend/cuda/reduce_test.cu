// SPDX-License-Identifier: MIT
/// @file cuda: reductions (sum, mean, max, min, amax, amin, norm) on a GPU against double-precision
/// host references (the inputs are built on the host, so both sides read the same values).
/// Skipped at run time without a CUDA device.
#include <doctest/doctest.h>

#include <weft/ops/factories.hpp>
#include <weft/ops/reduce.hpp>
#include <weft/ops/fuse.hpp>
#include <weft/expr/operators.hpp>

#include "backend/cuda/gpu_inputs.hpp"
#include "dense_reference.hpp"
#include "reduce_sweep.hpp"

using namespace gpu_inputs;
using weft::test::cuda_available;

namespace {

/// Checks a result on the GPU against the double reference within the bounds of the kernels'
/// sequential sums (check_reduction reads it back to the host).
template <class X>
void check_gpu_reduction(const X& result, Op op, const std::vector<double>& values, const Shape& full,
                         const std::vector<bool>& mask, bool keepdim, double p, double eps) {
  const auto out = weft::eval(result);  // sum(x, dim) is a lazy node
  CHECK(out.device() == gpu);
  check_reduction(out, op, values, full, mask, keepdim, p, eps);
}

}  // namespace

TEST_SUITE("cuda") {

TEST_CASE("cuda reduce: float32 over random shapes, dims and layouts" * doctest::skip(!cuda_available())) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 60; ++iter) {
    const Shape full = random_shape(rng, 0, 4, 6000);
    const GpuLayout layout = GpuLayout(rng.integer(0, 2));
    const weft::TensorView<float> x = on_gpu<float>(rng, full, layout);
    const RandomReduction c(rng, x);
    INFO("iteration ", iter, ", layout ", int(layout));
    c.check(weft::sum(x, c.dims, c.keepdim), Op::sum, 0, kEps);
    c.check(weft::mean(x, c.dims, c.keepdim), Op::mean, 0, kEps);
    const double p = rng.pick(std::vector<double>{1, 2, 3, 0});
    c.check(weft::norm(x, p, c.dims, c.keepdim), Op::norm, p, kEps);
    if (c.n_red > 0) {
      c.check(weft::amax(x, c.dims, c.keepdim), Op::amax, 0, kEps);
      c.check(weft::min(x, c.dims, c.keepdim), Op::min, 0, kEps);
    } else {
      CHECK_THROWS_AS(weft::amax(x, c.dims, c.keepdim), weft::Error);
    }
  }
}

TEST_CASE("cuda reduce: kernel paths (warp, block, chunks, thread per output)" * doctest::skip(!cuda_available())) {
  WEFT_TEST_RNG(rng);
  const struct {
    Shape shape;
    std::vector<std::int64_t> dims;
  } cases[] = {
      {{1 << 22}, {0}},     // one long range: chunks of blocks, then the partials pass
      {{3, 100000}, {1}},   // few long ranges
      {{700, 37}, {1}},     // short ranges: a warp each
      {{5000, 3}, {1}},     // many tiny ranges: a thread each
      {{300, 5000}, {0}},   // a column reduction: a thread per output
      {{9, 8, 7, 6}, {1, 3}},
      {{4, 1}, {1}},
  };
  for (const auto& c : cases) {
    for (GpuLayout layout : {GpuLayout::contiguous, GpuLayout::transposed}) {
      INFO("shape ", shape_str(c.shape), " layout ", int(layout));
      const weft::TensorView<float> x = on_gpu<float>(rng, c.shape, layout);
      const std::vector<double> v = values_of(x.to(Device::cpu()));
      const std::vector<bool> mask = reduce_mask(c.shape.rank(), c.dims);
      check_gpu_reduction(weft::sum(x, c.dims), Op::sum, v, c.shape, mask, false, 0, kEps);
      check_gpu_reduction(weft::amax(x, c.dims, true), Op::amax, v, c.shape, mask, true, 0, kEps);
    }
  }
  // The chunked path's tree keeps a long positive sum far inside the sequential bound.
  const Tensor<float> ones = weft::full<float>(Shape{1 << 24}, 1.0f, gpu);
  CHECK(weft::sum(ones).item() == float(1 << 24));  // a sequential float loop stops at 2^24 anyway; exact here
  const weft::TensorView<float> u = on_gpu<float>(rng, Shape{1 << 22}, GpuLayout::contiguous, Domain{0.5, 1.5});
  const std::vector<double> uv = values_of(u.to(Device::cpu()));
  const double exact = ref_sum(uv);
  CHECK(std::fabs(weft::sum(u).item() - exact) <= 256 * kEps * exact);
}

TEST_CASE("cuda reduce: dtypes, expressions, NaN and empty ranges" * doctest::skip(!cuda_available())) {
  WEFT_TEST_RNG(rng);
  const Shape s{33, 70};
  const std::vector<bool> rows = reduce_mask(2, {1}), all = reduce_mask(2, {});
  {  // half accumulates in float, rounds once
    const weft::TensorView<weft::half> h = on_gpu<weft::half>(rng, s, GpuLayout::transposed);
    const std::vector<double> v = values_of(h.to(Device::cpu()));
    check_gpu_reduction(weft::sum(h, 1), Op::sum, v, s, rows, false, 0, kEps);
    check_gpu_reduction(weft::amax(h), Op::amax, v, s, all, false, 0, kEps);
  }
  {  // double
    const weft::TensorView<double> d = on_gpu<double>(rng, s, GpuLayout::strided);
    const std::vector<double> v = values_of(d.to(Device::cpu()));
    check_gpu_reduction(weft::mean(d, {0, 1}, true), Op::mean, v, s, all, true, 0, 0x1p-52);
  }
  {  // integers and bools sum exactly into int64
    const weft::TensorView<std::int32_t> i = on_gpu<std::int32_t>(rng, s, GpuLayout::contiguous, Domain{-1000, 1000});
    const std::vector<double> v = values_of(i.to(Device::cpu()));
    check_gpu_reduction(weft::sum(i, 1), Op::sum, v, s, rows, false, 0, 0);
    check_gpu_reduction(weft::amin(i, 1), Op::amin, v, s, rows, false, 0, 0);
    const weft::TensorView<bool> b = on_gpu<bool>(rng, s, GpuLayout::transposed);
    const std::vector<double> bv = values_of(b.to(Device::cpu()));
    check_gpu_reduction(weft::sum(b, 1), Op::sum, bv, s, rows, false, 0, 0);
    check_gpu_reduction(weft::amax(b, 1), Op::amax, bv, s, rows, false, 0, 0);
  }
  {  // an expression with a broadcast operand, evaluated inside the kernel
    const weft::TensorView<float> a = on_gpu<float>(rng, s, GpuLayout::transposed);
    const weft::TensorView<float> c = on_gpu<float>(rng, Shape{70}, GpuLayout::contiguous, Domain{0.5, 2});
    const std::vector<double> av = values_of(a.to(Device::cpu())), cv = values_of(c.to(Device::cpu()));
    std::vector<double> prod, diff;
    for (std::size_t k = 0; k < av.size(); ++k) {
      prod.push_back(av[k] * cv[k % 70]);
      diff.push_back(std::fabs(round_float(av[k] - cv[k % 70])));
    }
    check_gpu_reduction(weft::sum(a * c, 1), Op::sum, prod, s, rows, false, 0, kEps);
    check_gpu_reduction(weft::amax(weft::abs(a - c), 0), Op::amax, diff, s, reduce_mask(2, {0}), false, 0, kEps);
  }
  {  // NaN propagates; empty ranges
    std::vector<float> v(1000, 1.0f);
    v[777] = NAN;
    const Tensor<float> n = weft::from_vector(v).to(gpu);
    CHECK(std::isnan(weft::amax(n).item()));
    CHECK(std::isnan(weft::min(n).item()));
    CHECK(std::isnan(weft::sum(n).item()));
    const Tensor<float> e = weft::zeros<float>(Shape{3, 0}, gpu);
    CHECK(values_of(weft::eval(weft::sum(e, 1)).to(Device::cpu())) == std::vector<double>(3, 0.0));
    CHECK(std::isnan(weft::mean(e).item()));
    CHECK_THROWS_AS(weft::amax(e, 1), weft::Error);
  }
}

}  // TEST_SUITE

// SPDX-License-Identifier: MIT
/// @file cuda: argmax / argmin, topk, cumsum, prod, logsumexp, var and std on a GPU. The index ops and cumsum equal
/// the CPU's results exactly (one order decides them, and cumsum adds in the same sequence); prod, logsumexp, var and
/// std match double references within the bound of a sequential sum. Skipped at run time without a CUDA device.
#include <doctest/doctest.h>

#include <weft/ops/arg_reduce.hpp>
#include <weft/ops/cumsum.hpp>
#include <weft/ops/statistics.hpp>
#include <weft/ops/topk.hpp>

#include "backend/cuda/gpu_inputs.hpp"
#include "dense_reference.hpp"
#include "reduce_sweep.hpp"

using namespace gpu_inputs;
using weft::test::cuda_available;

namespace {

/// The GPU folds up to n values sequentially in one thread: reference tolerances with eps scaled
/// from the pairwise bound (log2 n + 16) to the sequential one (n + 16).
double sequential_eps(double eps, std::size_t n) {
  return eps * (double(n) + 16) / (std::log2(double(std::max<std::size_t>(n, 1))) + 16);
}

/// argmax / argmin (flattened and along a dim), topk, cumsum and prod of x on the GPU against the CPU's results
/// (exact) or the prod reference.
template <class T>
void check_index_ops(Rng& rng, const weft::TensorView<T>& x, const weft::TensorView<T>& x_near_one) {
  const Tensor<T> host = x.to(Device::cpu());
  const Shape& full = host.shape();
  const auto random = random_dim(rng, full.rank());
  const std::int64_t dim = random.dim;
  const int d = random.wrapped;
  const std::int64_t n = full.rank() > 0 ? full[d] : 1;
  const bool keepdim = rng.chance(0.5);
  INFO("shape ", shape_str(full), ", dim ", dim, ", keepdim ", keepdim);
  if (full.numel() > 0) {
    check_same(weft::argmax(x), weft::argmax(host));
    check_same(weft::argmin(x), weft::argmin(host));
  }
  if (n > 0) {
    check_same(weft::argmax(x, dim, keepdim), weft::argmax(host, dim, keepdim));
    check_same(weft::argmin(x, dim, keepdim), weft::argmin(host, dim, keepdim));
  } else {
    CHECK_THROWS_AS(weft::argmax(x, dim), weft::Error);
  }
  const std::int64_t k = rng.chance(0.2) ? n : rng.integer(0, n);
  const bool largest = rng.chance(0.5);
  const weft::TopK<T> got = weft::topk(x, k, dim, largest), want = weft::topk(host, k, dim, largest);
  check_same(got.values, want.values);
  check_same(got.indices, want.indices);
  check_same(weft::cumsum(x, dim), weft::cumsum(host, dim));

  const std::vector<std::int64_t> dims = random_dims(rng, full.rank());
  const std::vector<bool> mask = reduce_mask(full.rank(), dims);
  const auto p = weft::prod(x_near_one, dims, keepdim);
  CHECK(p.device() == gpu);
  // prod's tolerance, (n + 2) eps, holds in any order.
  check_reduction(p.to(Device::cpu()), Op::prod, values_of(x_near_one.to(Device::cpu())), full, mask, keepdim, 0,
                  compute_eps<T>());
}

/// logsumexp, var and std of x on the GPU over random dims against double references.
template <class T>
void check_statistics(Rng& rng, const weft::TensorView<T>& x) {
  const Tensor<T> host = x.to(Device::cpu());
  const Shape& full = host.shape();
  const std::vector<double> values = values_of(host);
  const std::vector<std::int64_t> dims = random_dims(rng, full.rank());
  const std::vector<bool> mask = reduce_mask(full.rank(), dims);
  const bool keepdim = rng.chance(0.5);
  const double correction = rng.pick(std::vector<double>{0, 1, 2.5});
  INFO("shape ", shape_str(full), ", keepdim ", keepdim, ", correction ", correction);
  const ReductionReference ref(values, full, mask);
  const Tensor<T> lse = weft::logsumexp(x, dims, keepdim).to(Device::cpu());
  const Tensor<T> var = weft::eval(weft::var(x, dims, correction, keepdim)).to(Device::cpu());
  const Tensor<T> sd = weft::eval(weft::std(x, dims, correction, keepdim)).to(Device::cpu());
  REQUIRE(lse.shape() == reduced_shape(full, mask, keepdim));
  std::vector<Expect> want_lse, want_var, want_std;
  for (const std::vector<double>& g : ref.groups) {
    const double eps = sequential_eps(compute_eps<T>(), g.size());
    want_lse.push_back(expect_logsumexp<T>(g, eps));
    want_var.push_back(expect_variance<T>(g, correction, false, eps));
    want_std.push_back(expect_variance<T>(g, correction, true, eps));
  }
  WEFT_CHECK_REPORT(check_output(lse, want_lse));
  WEFT_CHECK_REPORT(check_output(var, want_var));
  WEFT_CHECK_REPORT(check_output(sd, want_std));
}

}  // namespace

TEST_SUITE("cuda") {

TEST_CASE_TEMPLATE("cuda argmax / argmin / topk / cumsum / prod: random shapes, layouts and dims equal the CPU" *
                       doctest::skip(!cuda_available()),
                   T, float, double, weft::half, weft::bfloat16, std::int32_t, std::int64_t, bool) {
  WEFT_TEST_RNG(rng);
  const Domain near_one = near_one_domain<T>();  // long products stay in float's range
  for (int iter = 0; iter < 25; ++iter) {
    const Shape full = random_shape(rng, 0, 4, 6000);
    const GpuLayout layout = GpuLayout(rng.integer(0, 2));
    INFO("dtype ", type_name<T>(), ", iteration ", iter, ", layout ", int(layout));
    check_index_ops<T>(rng, on_gpu<T>(rng, full, layout, tie_domain<T>(0.02)), on_gpu<T>(rng, full, layout, near_one));
  }
}

TEST_CASE("cuda argmax / argmin / topk / cumsum: kernel paths (thread, warp and block per row)" *
          doctest::skip(!cuda_available())) {
  WEFT_TEST_RNG(rng);
  // {3, 5000} dim 1: a block per row; {5000, 3} dim 0: a warp per strided row; {3, 100, 2000} dim 1: a thread per
  // row (many columns); {1, 2^20}: one block for the whole row.
  for (const Shape& s : {Shape{3, 5000}, Shape{5000, 3}, Shape{3, 100, 2000}, Shape{1, 1 << 20}}) {
    const weft::TensorView<float> x = on_gpu<float>(rng, s, GpuLayout::contiguous, tie_domain<float>(0.02));
    const Tensor<float> host = x.to(Device::cpu());
    for (int d = 0; d < s.rank(); ++d) {
      INFO("shape ", shape_str(s), ", dim ", d);
      check_same(weft::argmax(x, d), weft::argmax(host, d));
      check_same(weft::argmin(x, d, true), weft::argmin(host, d, true));
      check_same(weft::cumsum(x, d), weft::cumsum(host, d));
      const std::int64_t k = std::min<std::int64_t>(s[d], 9);
      check_same(weft::topk(x, k, d).indices, weft::topk(host, k, d).indices);
      check_same(weft::topk(x, k, d, false).values, weft::topk(host, k, d, false).values);
    }
    check_same(weft::argmax(x), weft::argmax(host));
  }
}

TEST_CASE_TEMPLATE("cuda logsumexp / var / std: random shapes, layouts and dims against double references" *
                       doctest::skip(!cuda_available()),
                   T, float, double, weft::half, weft::bfloat16) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 25; ++iter) {
    const Shape full = random_shape(rng, 0, 4, 6000);
    const GpuLayout layout = GpuLayout(rng.integer(0, 2));
    Domain dom;
    if (rng.chance(0.3)) dom.lo = 990, dom.hi = 1010;  // logsumexp must not overflow
    INFO("dtype ", type_name<T>(), ", iteration ", iter, ", layout ", int(layout));
    check_statistics<T>(rng, on_gpu<T>(rng, full, layout, dom));
  }
}

TEST_CASE("cuda argmax / topk / cumsum / logsumexp: empty tensors and errors" * doctest::skip(!cuda_available())) {
  const Tensor<float> e = weft::zeros<float>(Shape{0, 3}, gpu);
  CHECK(weft::argmax(e, 1).shape() == Shape{0});
  CHECK(weft::topk(e, 2).values.shape() == Shape{0, 2});
  CHECK(weft::cumsum(e, 0).shape() == Shape{0, 3});
  CHECK(weft::logsumexp(e, 0).to(Device::cpu()).to_vector() == std::vector<float>(3, -INFINITY));
  CHECK(has(error_of([&] { weft::argmax(e); }), "no elements"));
  CHECK(has(error_of([&] { weft::topk(e, 4); }), "k = 4 is out of range"));
  const Tensor<float> x = weft::ones<float>(Shape{2, 3}, gpu);
  CHECK(weft::topk(x, 0).indices.shape() == Shape{2, 0});
  CHECK(weft::prod(x).to(Device::cpu()).item() == 1.0f);
}

}  // TEST_SUITE

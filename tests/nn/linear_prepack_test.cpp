// SPDX-License-Identifier: MIT
/// @file nn::Linear::prepack, nn::prepack_linear and nn::linear on prepacked panels: the bits of the unpacked call, for every dtype, on the packed GEMM and where the product runs elsewhere.
#include <cmath>
#include <cstring>
#include <limits>

#include <doctest/doctest.h>

#include <weft/nn/modules.hpp>

#include "error_check.hpp"
#include "matmul_reference.hpp"
#include "reference.hpp"

namespace linear_prepack_test {

using namespace weft;
using namespace weft_test;

template <class T>
bool same_bits(const Tensor<T>& a, const Tensor<T>& b) {
  return a.shape() == b.shape() && std::memcmp(a.data(), b.data(), std::size_t(a.numel()) * sizeof(T)) == 0;
}

/// y = x w^T + b in double for x [n, in], w [out, in], b [out] (or none), within the bound of a
/// sum of k products in any order in the compute type, (k + 2) eps sum |x w|, then the product's
/// rounding to T before the bias is added (at most an ulp of sum |x w|) and y's own.
template <class T>
void check_linear_values(const Tensor<T>& y, const Tensor<T>& x, const Tensor<T>& w, const Tensor<T>* b) {
  const std::int64_t n = x.size(0), k = x.size(1), m = w.size(0);
  REQUIRE(y.shape() == Shape{n, m});
  constexpr double eps = compute_eps<T>();
  std::int64_t bad = 0;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < m; ++j) {
      double sum = b ? double(b->data()[j]) : 0.0, mag = b ? std::fabs(double(b->data()[j])) : 0.0;
      for (std::int64_t s = 0; s < k; ++s) {
        const double p = double(x.data()[i * k + s]) * double(w.data()[j * k + s]);
        sum += p, mag += std::fabs(p);
      }
      const double got = double(y.data()[i * m + j]);
      const double product_mag = mag - (b ? std::fabs(double(b->data()[j])) : 0.0);
      const double tol = double(k + 2) * eps * product_mag + (b ? ulp_of<T>(product_mag) : 0.0) + ulp_of<T>(sum);
      if (!(std::fabs(got - sum) <= tol)) ++bad;
    }
  CHECK(bad == 0);
}

/// A Linear's forward with and without its prepacked panels, for rows x [n, in]: the same bits,
/// and the values of y = x w^T + b in double.
template <class T>
void check_prepacked_module(Rng& rng, std::int64_t n, std::int64_t in, std::int64_t out, bool bias, bool packs) {
  INFO(type_name<T>(), " ", n, " x ", in, " -> ", out, bias ? " with bias" : " without bias");
  nn::Linear<T> linear(in, out, bias, rng.bits());
  const Tensor<T> x = random_contiguous<T>(rng, Shape{n, in}, Domain{});
  ad::NoGrad no_tape;
  const Tensor<T> plain = linear(ad::Var<T>(x)).value();
  linear.prepack();
  CHECK(linear.prepacked() == packs);
  const Tensor<T> packed = linear(ad::Var<T>(x)).value();
  CHECK(same_bits(packed, plain));
  check_linear_values<T>(packed, x, linear.weight.value(), bias ? &linear.bias.value() : nullptr);
  linear.unpack();
  CHECK(!linear.prepacked());
  CHECK(same_bits(linear(ad::Var<T>(x)).value(), plain));
}

TEST_CASE("Linear::prepack: float and double give the bits of the unpacked call, on the FMA GEMM and on Eigen's") {
  WEFT_TEST_RNG(rng);
  // from 2^21 multiply-adds the FMA GEMM runs (its panels are read); below, Eigen's (unpacked)
  for (bool bias : {true, false}) {
    check_prepacked_module<float>(rng, 1, 768, 3072, bias, true);   // a GPT-2 decoding step's MLP, on the panels
    check_prepacked_module<double>(rng, 37, 150, 400, bias, true);  // partial register blocks
    check_prepacked_module<float>(rng, 3, 20, 30, bias, true);      // small: Eigen's GEMM either way
  }
  FmaGemmAlways fma;  // every shape on the FMA GEMM, so that small ones read the panels: tile edges
  for (bool bias : {true, false}) {
    check_prepacked_module<float>(rng, 5, 19, 33, bias, true);
    // fewer rows than the tile's: the panels streamed once, each output summed in the tile's order
    check_prepacked_module<double>(rng, 1, 7, 3, bias, true);
    check_prepacked_module<float>(rng, 3, 300, 150, bias, true);  // k over one slice of the packed GEMM
    check_prepacked_module<double>(rng, 2, 40, 70, bias, true);
  }
}

TEST_CASE("Linear::prepack: bfloat16 on its native GEMM; float16 (computed in float) keeps no panels") {
  WEFT_TEST_RNG(rng);
  const bool native = weft::detail::gemm_bf16_native<bfloat16>();
  for (bool bias : {true, false}) {
    check_prepacked_module<bfloat16>(rng, 9, 70, 45, bias, native);
    check_prepacked_module<half>(rng, 4, 30, 20, bias, false);
  }
}

TEST_CASE("nn::linear with prepack_linear's panels: batch dims, strided x, gradients as unpacked") {
  WEFT_TEST_RNG(rng);
  FmaGemmAlways fma;
  const Tensor<float> w = random_contiguous<float>(rng, Shape{24, 16}, Domain{});
  const Tensor<float> b = random_contiguous<float>(rng, Shape{24}, Domain{});
  const nn::PrepackedLinear<float> panels = nn::prepack_linear(w);
  // x [2, 3, 16] read through a transposed view: copied into rows, then the panels
  const Tensor<float> base = random_contiguous<float>(rng, Shape{2, 16, 3}, Domain{});
  const ad::Var<float> x(Tensor<float>(base.view().transpose(1, 2)));
  {
    ad::NoGrad no_tape;
    CHECK(same_bits(nn::linear(x, w, b, panels).value(), nn::linear(x, w, b).value()));
    CHECK(same_bits(nn::linear(x, w, panels).value(), nn::linear(x, w).value()));
  }
  // recorded: the backward reads the weight, as the unpacked call's
  const ad::Var<float> xv = ad::param(x.value()), wv = ad::param(w), bv = ad::param(b);
  const ad::Var<float> xu = ad::param(x.value()), wu = ad::param(w), bu = ad::param(b);
  weft::sum(nn::linear(xv, wv, bv, panels)).backward();
  weft::sum(nn::linear(xu, wu, bu)).backward();
  CHECK(same_bits(xv.grad(), xu.grad()));
  CHECK(same_bits(wv.grad(), wu.grad()));
  CHECK(same_bits(bv.grad(), bu.grad()));
}

TEST_CASE("nn::prepack and nn::unpack reach the Linear layers of a model") {
  WEFT_TEST_RNG(rng);
  FmaGemmAlways fma;
  nn::Sequential<double> net(nn::Linear<double>(6, 9, true, rng.bits()), nn::Linear<double>(9, 4, false, rng.bits()));
  const ad::Var<double> x(random_contiguous<double>(rng, Shape{5, 6}, Domain{}));
  ad::NoGrad no_tape;
  const Tensor<double> before = net(x).value();
  nn::prepack(net);
  CHECK(same_bits(net(x).value(), before));
  nn::unpack(net);
  CHECK(same_bits(net(x).value(), before));
}

TEST_CASE("nn::linear refuses panels of another weight's shape") {
  WEFT_TEST_RNG(rng);
  const Tensor<float> w = random_contiguous<float>(rng, Shape{8, 5}, Domain{});
  const ad::Var<float> x(random_contiguous<float>(rng, Shape{2, 5}, Domain{}));
  const nn::PrepackedLinear<float> other = nn::prepack_linear(random_contiguous<float>(rng, Shape{5, 8}, Domain{}));
  const std::string message = error_of([&] { (void)nn::linear(x, w, other); });
  CHECK(has(message, "nn::linear"));
  CHECK(has(message, "the prepacked weight [5, 8] is not the weight [8, 5]"));
  CHECK(has(error_of([&] { (void)nn::prepack_linear(random_contiguous<float>(rng, Shape{8}, Domain{})); }),
            "nn::prepack_linear: the weight [8] is not [out, in]"));
}

}  // namespace linear_prepack_test

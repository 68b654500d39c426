// SPDX-License-Identifier: MIT
/// @file The cuda suite for attention on a GPU: the flash forward kernel against the double
/// reference by the 2x-naive rule, and the public call: its result, its log and its refusals (the
/// kernel's plan is tested on the host in sdpa_flash_host_test.cpp).
#include <doctest/doctest.h>

// Each head dim costs a kernel per dtype and SM target; CI compiles two, scripts/gpu-check all.
#if !defined(WEFT_TEST_EVERY_HEAD_DIM) && !defined(WEFT_CUDA_FLASH_HEAD_DIMS)
#define WEFT_CUDA_FLASH_HEAD_DIMS 64, 128
#endif

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda_support.hpp"
#include "log_capture.hpp"
#include "sdpa_rule.hpp"

namespace {

using namespace weft_test;
namespace nnd = weft::nn::detail;
using weft::Device;
using weft::test::cuda_available;

constexpr int kCompiledHeadDims[] = {WEFT_CUDA_FLASH_HEAD_DIMS};

/// One random forward problem in T with head dim E: random L and S (crossing the 128-row and
/// 32/64-key tiles), GQA, causal variants. out and lse are poisoned (NaN) and written by the
/// kernel, then checked against attention_reference by the 2x-naive rule.
template <class T>
void check_random_flash(Rng& rng, std::int64_t E) {
  static const std::int64_t lengths[] = {1, 7, 64, 100, 128, 129, 257, 300};
  const std::int64_t L = rng.pick(lengths), S = rng.pick(lengths), N = rng.integer(1, 2), H = rng.integer(1, 2);
  const std::int64_t Hq = rng.chance(0.4) ? H * rng.integer(2, 3) : H;
  nn::SdpaOptions o;
  o.enable_gqa = Hq != H;
  const int variant = int(rng.integer(0, 2));
  o.is_causal = variant > 0;
  if (variant == 2) o.causal_variant = nn::CausalVariant::lower_right;
  AttnProblem p;
  p.B = N, p.Hq = Hq, p.H = H, p.L = L, p.S = S, p.E = p.Ev = E;
  p.scale = 1 / std::sqrt(double(E));
  if (rng.chance(0.3)) o.scale = p.scale = rng.uniform(0.05, 1.0);
  const Shape qs{N, Hq, L, E}, ks{N, H, S, E};
  p.q = random_values<T>(rng, qs.numel()), p.k = random_values<T>(rng, ks.numel()), p.v = random_values<T>(rng, ks.numel());
  if (o.is_causal) {
    const std::int64_t off = variant == 2 ? S - L : 0;
    p.bias = [off](std::int64_t, std::int64_t, std::int64_t i, std::int64_t j) { return j <= i + off ? 0.0 : -INFINITY; };
  }
  INFO(type_name<T>(), " q ", shape_str(qs), " k ", shape_str(ks), ", variant ", variant, ", scale ", p.scale);
  const Tensor<T> q = tensor_of<T>(p.q, qs), k = tensor_of<T>(p.k, ks), v = tensor_of<T>(p.v, ks);
  const Tensor<T> qd = q.to(Device::cuda()), kd = k.to(Device::cuda()), vd = v.to(Device::cuda());
  const nnd::SdpaShape s = nnd::sdpa_shape("test", qs, ks, ks, o);
  Tensor<T> out = weft::empty<T>(s.out_shape(), Device::cuda());
  Tensor<double> lse = weft::empty<double>(s.lse_shape(), Device::cuda());
  weft::test::poison(out);
  weft::test::poison(lse);
  weft::detail::flash_forward_cuda<T>(qd, kd, vd, s, out.data(), lse.data());
#if !defined(__CUDA_ARCH__)  // the naive run uses the CPU math backend, host-only code
  const AttnResult ref = attention_reference(p);
  const NaiveRun<T> naive = naive_forward(q, k, v, o);
  check_rule<T>("out", values_of(out.to(Device::cpu())), naive.out, ref.out);
  check_rule<weft::math_t<T>>("lse", values_of(lse.to(Device::cpu())), naive.lse, ref.lse);
#endif
}

}  // namespace

TEST_SUITE("cuda") {

TEST_CASE_TEMPLATE("flash attention: random forward problems against the double reference" * doctest::skip(!cuda_available()),
                   T, weft::half, weft::bfloat16) {
  WEFT_TEST_RNG(rng);
  for (int E : kCompiledHeadDims)
    for (int iter = 0; iter < 6; ++iter) {
      INFO("head dim ", E, ", iteration ", iter);
      check_random_flash<T>(rng, E);
    }
}

TEST_CASE("flash attention: the public call on CUDA tensors, its log, and its errors" * doctest::skip(!cuda_available())) {
  using T = weft::bfloat16;
  WEFT_TEST_RNG(rng);
  const Shape qs{2, 4, 96, 64}, ks{2, 2, 80, 64};
  const Tensor<T> q = tensor_of<T>(random_values<T>(rng, qs.numel()), qs).to(Device::cuda()),
                  k = tensor_of<T>(random_values<T>(rng, ks.numel()), ks).to(Device::cuda()),
                  v = tensor_of<T>(random_values<T>(rng, ks.numel()), ks).to(Device::cuda());
  nn::SdpaOptions o;
  o.enable_gqa = true, o.is_causal = true, o.causal_variant = nn::CausalVariant::lower_right;
  weft::set_logs("sdpa");
  LogCapture capture;
  const nn::SdpaOutput<T> got = nn::sdpa_forward(q, k, v, o);
  // The same bits as the kernel run directly (checked against the reference above): the
  // public call passes the options, GQA and the causal alignment through.
  const nnd::SdpaShape s = nnd::sdpa_shape("test", qs, ks, ks, o);
  Tensor<T> out = weft::empty<T>(s.out_shape(), Device::cuda());
  Tensor<double> lse = weft::empty<double>(s.lse_shape(), Device::cuda());
  weft::detail::flash_forward_cuda<T>(q, k, v, s, out.data(), lse.data());
  CHECK(got.out.device() == Device::cuda());
  CHECK(values_of(got.out.to(Device::cpu())) == values_of(out.to(Device::cpu())));
  CHECK(values_of(got.lse.to(Device::cpu())) == values_of(lse.to(Device::cpu())));
  // Refused, each error saying what is supported and the log saying why: float32, a mask, the backward.
  const Tensor<float> qf = weft::randn<float>({1, 1, 8, 64}, 1).to(Device::cuda());
  CHECK_THROWS_WITH_AS(nn::scaled_dot_product_attention(qf, qf, qf), doctest::Contains("takes float16 and bfloat16"),
                       weft::Error);
  nn::SdpaOptions masked;
  masked.attn_mask = weft::ones<bool>({96, 80});
  CHECK_THROWS_WITH_AS(nn::scaled_dot_product_attention(q, k, v, masked), doctest::Contains("no masks yet"), weft::Error);
  CHECK_THROWS_WITH_AS(nn::sdpa_backward(q, q, q, q, q, weft::empty<double>({2, 4, 96})),
                       doctest::Contains("CUDA backward is not written yet"), weft::Error);
  const std::string text = capture.text();
  capture.restore();
  weft::set_logs("");
  CHECK(text.find("[weft:sdpa] nn::sdpa_forward: flash backend (cuda:0, bfloat16, q [2, 4, 96, 64]") != std::string::npos);
  CHECK(text.find("flash refused: float32 inputs") != std::string::npos);
  CHECK(text.find("flash refused: attn_mask") != std::string::npos);
}

}  // TEST_SUITE("cuda")

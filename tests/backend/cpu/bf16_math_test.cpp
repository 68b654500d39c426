// SPDX-License-Identifier: MIT
/// @file cpu: the forms of exp, sigmoid, tanh and silu to bfloat16's precision (backend/cpu/simd/bf16_math.hpp)
/// on every bfloat16 input against double references, the bfloat16 kernels that use them, and
/// non-temporal 16-bit stores (simd::stream_float).
///
/// Set WEFT_SIMD_ULP_REPORT=1 to print, per function, the largest relative error and how many
/// bfloat16 results are off the correctly rounded one (and the same for the float forms).
#include <weft/weft.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "weft/backend/cpu/simd/bf16_math.hpp"

namespace {

namespace ws = weft::detail::simd;
using weft::bfloat16;

// Distance between two bfloat16 values in ulps (steps along the ordered bit patterns; +0 and -0
// are one value), or a huge number when exactly one of them is NaN.
int bf16_steps(bfloat16 a, bfloat16 b) {
  const bool na = std::isnan(float(a)), nb = std::isnan(float(b));
  if (na || nb) return na && nb ? 0 : 1 << 20;
  auto ordinal = [](bfloat16 v) {
    const int bits = v.bits;
    return bits & 0x8000 ? -(bits & 0x7fff) : bits;
  };
  return std::abs(ordinal(a) - ordinal(b));
}

struct Measured {
  double max_rel = 0;      // relative to max(|reference|, 2^-126): absolute below the normal range
  int max_steps = 0;       // bfloat16 ulps from the correctly rounded reference
  int not_nearest = 0;     // inputs whose bfloat16 result is not the correctly rounded one
  float worst_x = 0;
};

// fn (a packet function) over every bfloat16 bit pattern, N lanes at a time.
template <int N, class Fn, class Ref>
Measured measure_all_bf16(Fn fn, Ref ref) {
  Measured m;
  for (int base = 0; base < 65536; base += N) {
    alignas(64) float x[N], y[N];
    for (int l = 0; l < N; ++l) x[l] = float(bfloat16::from_bits(std::uint16_t(base + l)));
    fn(ws::Vec<float, N>::load(x)).store(y);
    for (int l = 0; l < N; ++l) {
      const double r = ref(double(x[l]));
      const int steps = bf16_steps(bfloat16(y[l]), bfloat16(float(r)));
      m.max_steps = std::max(m.max_steps, steps);
      m.not_nearest += steps != 0;
      if (std::isnan(r) || std::isinf(r) || std::isinf(y[l])) continue;  // the steps above judged them
      const double rel = std::fabs(double(y[l]) - r) / std::max(std::fabs(r), 0x1p-126);
      if (rel > m.max_rel) m.max_rel = rel, m.worst_x = x[l];
    }
  }
  return m;
}

double ref_sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

void check_bound(const char* name, const Measured& m, double bound, const Measured& full) {
  char what[240];
  std::snprintf(what, sizeof(what),
                "%s [%s]: max relative error 2^%.2f (bound 2^%.0f) at x = %a; %d of 65536 bfloat16 results off the "
                "correctly rounded one, max %d ulp (float form: %d, max %d)",
                name, ws::kIsaName, std::log2(m.max_rel), std::log2(bound), double(m.worst_x), m.not_nearest,
                m.max_steps, full.not_nearest, full.max_steps);
  if (std::getenv("WEFT_SIMD_ULP_REPORT")) MESSAGE(std::string(what));
  INFO(std::string(what));
  CHECK(m.max_rel <= bound);
  CHECK(m.max_steps <= 1);
  CHECK(m.not_nearest <= 65536 / 50);  // an error 2^5 below half an ulp rounds 98% of results correctly
}

template <int N>
void check_every_bf16_input() {
  INFO("lanes: ", N);
  auto exp_ref = [](double x) { return std::exp(x); };
  auto tanh_ref = [](double x) { return std::tanh(x); };
  auto silu_ref = [](double x) { return x * ref_sigmoid(x); };
  check_bound("exp_bf16", measure_all_bf16<N>([](auto v) { return ws::exp_bf16(v); }, exp_ref), 0x1p-17,
              measure_all_bf16<N>([](auto v) { return ws::exp(v); }, exp_ref));
  check_bound("sigmoid_bf16", measure_all_bf16<N>([](auto v) { return ws::sigmoid_bf16(v); }, ref_sigmoid), 0x1p-14,
              measure_all_bf16<N>([](auto v) { return ws::sigmoid(v); }, ref_sigmoid));
  check_bound("tanh_bf16", measure_all_bf16<N>([](auto v) { return ws::tanh_bf16(v); }, tanh_ref), 0x1p-14,
              measure_all_bf16<N>([](auto v) { return ws::tanh(v); }, tanh_ref));
  check_bound("silu (x * sigmoid_bf16)", measure_all_bf16<N>([](auto v) { return v * ws::sigmoid_bf16(v); }, silu_ref),
              0x1p-14, measure_all_bf16<N>([](auto v) { return v * ws::sigmoid(v); }, silu_ref));
}

// y = op(x) over every bfloat16 input (whole packets: 65536 is a multiple of every packet
// length) gives the packet form's bits (any NaN for a NaN: which operand's NaN a product keeps
// follows the operand order the compiler picked): the kernel takes the bfloat16 form.
template <class Make, class Form>
int kernel_mismatches(Make make, Form form) {
  constexpr int L = ws::native_lanes<float>;
  weft::Tensor<bfloat16> x = weft::empty<bfloat16>({65536}), y = weft::full<bfloat16>({65536}, bfloat16(7.0f));
  for (int i = 0; i < 65536; ++i) x.data()[i] = bfloat16::from_bits(std::uint16_t(i));
  y = make(x);
  int bad = 0;
  for (int base = 0; base < 65536; base += L) {
    alignas(64) float in[L];
    alignas(64) bfloat16 want[L];
    for (int l = 0; l < L; ++l) in[l] = float(x.data()[base + l]);
    ws::store_float(want, form(ws::Vec<float, L>::load(in)));
    for (int l = 0; l < L; ++l) bad += y.data()[base + l].bits != want[l].bits && bf16_steps(y.data()[base + l], want[l]) != 0;
  }
  return bad;
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("bf16 math: exp, sigmoid, tanh, silu over every bfloat16 input, within their bounds") {
  check_every_bf16_input<ws::native_lanes<float>>();
  check_every_bf16_input<4>();
}

TEST_CASE("bf16 math: bfloat16 kernels take the bfloat16 forms; half and float keep the float ones") {
  CHECK(kernel_mismatches([](const auto& x) { return weft::exp(x); }, [](auto v) { return ws::exp_bf16(v); }) == 0);
  CHECK(kernel_mismatches([](const auto& x) { return weft::sigmoid(x); }, [](auto v) { return ws::sigmoid_bf16(v); }) ==
        0);
  CHECK(kernel_mismatches([](const auto& x) { return weft::tanh(x); }, [](auto v) { return ws::tanh_bf16(v); }) == 0);
  CHECK(kernel_mismatches([](const auto& x) { return weft::silu(x); },
                          [](auto v) { return v * ws::sigmoid_bf16(v); }) == 0);
  // The op's dtype decides, not the destination's: a bfloat16 sigmoid into float32 (where the
  // float form would show as differences beyond 2^-20), and a float32 sigmoid keeps ws::sigmoid.
  constexpr int n = 4096;
  weft::Tensor<bfloat16> xb = weft::empty<bfloat16>({n});
  weft::Tensor<float> xf = weft::empty<float>({n}), yf = weft::empty<float>({n}), yb = weft::empty<float>({n});
  for (int i = 0; i < n; ++i) xf.data()[i] = float(xb.data()[i] = bfloat16(-8.0f + 16.0f * float(i) / n));
  yb = weft::sigmoid(xb);
  yf = weft::sigmoid(xf);
  double max_bf16_op = 0, max_float_op = 0;
  for (int i = 0; i < n; ++i) {
    const double r = ref_sigmoid(double(xf.data()[i]));
    max_bf16_op = std::max(max_bf16_op, std::fabs(yb.data()[i] - r) / r);
    max_float_op = std::max(max_float_op, std::fabs(yf.data()[i] - r) / r);
  }
  CHECK(max_bf16_op <= 0x1p-14);
  CHECK(max_bf16_op > 0x1p-20);  // the bfloat16 form, not float's
  CHECK(max_float_op <= 0x1p-21);
}

TEST_CASE("bf16 math: stream_float writes every half and bfloat16 lane") {
  auto run = [](auto lanes) {
    constexpr int N = decltype(lanes)::value;
    alignas(128) bfloat16 b[4 * N];
    alignas(128) weft::half h[4 * N];
    std::fill(b, b + 4 * N, bfloat16(0.0f));
    std::fill(h, h + 4 * N, weft::half(0.0f));
    for (int k = 0; k < 4; ++k) {
      float vals[N];
      for (int i = 0; i < N; ++i) vals[i] = float(k * N + i + 1);  // integers up to 128: exact in both
      ws::stream_float(b + k * N, ws::Vec<float, N>::load(vals));
      ws::stream_float(h + k * N, ws::Vec<float, N>::load(vals));
    }
    ws::stream_fence();
    int bad = 0;
    for (int k = 0; k < 4; ++k)
      for (int i = 0; i < N; ++i) {
        const float want = float(k * N + i + 1);
        bad += float(b[k * N + i]) != want || float(h[k * N + i]) != want;
      }
    INFO("lanes: ", N);
    CHECK(bad == 0);
  };
  run(std::integral_constant<int, 2>{});   // 4 bytes: a plain store
  run(std::integral_constant<int, 4>{});   // 8 bytes
  run(std::integral_constant<int, 8>{});   // 16 bytes
  run(std::integral_constant<int, 16>{});  // 32 bytes: half an AVX-512 register
  run(std::integral_constant<int, 32>{});  // 64 bytes
}

}  // TEST_SUITE

// SPDX-License-Identifier: MIT
/// @file cpu: a subexpression shared by C++ name (or written twice identically) is computed once per
/// element. Proved two ways: a test-only op functor that counts the lanes it computes, and
/// WEFT_LOGS=output_code showing `t0 = ...`. A row's last elements run one at a time as lane 0 of
/// a 4-lane float packet (cpu::SingleLaneTarget), whose other lanes count too: so a statement
/// using the op once sets the count per evaluation (`once`: every element, plus at most 3
/// elements x 3 lanes per thread's range), and a shared use must match it exactly.
#include <atomic>

#include "log_capture.hpp"
#include "pointwise_check.hpp"

using namespace weft_test;

namespace {

std::atomic<std::int64_t> g_calls{0};

/// count(x) = x + 1, counting the lanes it computes. weft calls an op functor with scalars (a
/// tree without packets, and CUDA) and, when the tree is packet-capable (a float compute type
/// always is), with simd::Vec packets of L lanes: a packet call counts L.
struct CountingPlusOne {
  static constexpr weft::functors::Kind kind = weft::functors::Kind::arithmetic;
  static constexpr const char* name = "count";
  static constexpr weft::functors::Notation notation = weft::functors::Notation::call;
  template <class V>
  V operator()(V x) const {
    if constexpr (weft::detail::math::is_packet_v<V>) g_calls.fetch_add(V::size, std::memory_order_relaxed);
    else g_calls.fetch_add(1, std::memory_order_relaxed);
    return V(x + weft::detail::math::constant<V>(1));
  }
};

template <class X>
auto count_op(const X& x) {
  return weft::detail::make_map<CountingPlusOne>(x);
}

/// Sizes around the packet length, and one large enough for several threads.
const std::int64_t kSizes[] = {1, 7, 15, 16, 17, 33, 64, 1001, 40013};

/// Lanes the op computes in `y = count_op(x) * 2` over x's n elements: each element once, and
/// at most 3 single-lane tail elements per thread's range add their packet's 3 other lanes.
std::int64_t lanes_for_one_use(const TensorView<float>& x, TensorView<float>& y) {
  g_calls = 0;
  y = count_op(x) * 2;
  const std::int64_t once = g_calls.load(), n = x.numel();
  CHECK(once >= n);
  CHECK(once <= n + 9 * weft::detail::cpu::max_threads());
  return once;
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("shared: the counting op is called once per element when not shared") {
  WEFT_TEST_RNG(rng);
  for (std::int64_t n : kSizes) {
    INFO("n = ", n);
    TensorView<float> x = make_view<float>(rng, Shape{n}, Domain{-4, 4}, rng.chance(0.5) ? Layout::strided : Layout::contiguous);
    TensorView<float> y = make_destination<float>(rng, Shape{n}, Layout::contiguous);
    const std::int64_t once = lanes_for_one_use(x, y);
    std::vector<double> xv = values_of(x);
    std::vector<Expect> want;
    for (double v : xv) want.push_back({round_float(round_float(v + 1) * 2), 0});
    WEFT_CHECK_REPORT(check_output(y, want));
    // Two different trees of the same type (different tensors) each compute.
    Tensor<float> z = random_contiguous<float>(rng, Shape{n}, Domain{-4, 4});
    g_calls = 0;
    y = count_op(x) + count_op(z);
    CHECK(g_calls.load() == 2 * once);
  }
}

TEST_CASE("shared: a subexpression named once and used twice is computed once per element") {
  WEFT_TEST_RNG(rng);
  for (std::int64_t n : kSizes) {
    INFO("n = ", n);
    TensorView<float> x = make_view<float>(rng, Shape{n}, Domain{-4, 4}, rng.chance(0.5) ? Layout::strided : Layout::contiguous);
    auto c = count_op(x);
    // Within one statement.
    TensorView<float> y = make_destination<float>(rng, Shape{n}, Layout::contiguous);
    const std::int64_t once = lanes_for_one_use(x, y);
    g_calls = 0;
    y = c * c;
    CHECK(g_calls.load() == once);
    // Across the statements of a fuse, including as a whole right-hand side.
    TensorView<float> y1 = make_destination<float>(rng, Shape{n}, Layout::strided);
    TensorView<float> y2 = make_destination<float>(rng, Shape{n}, Layout::contiguous);
    TensorView<float> y3 = make_destination<float>(rng, Shape{n}, Layout::contiguous);
    g_calls = 0;
    weft::fuse(weft::assign(y1, c + 1), weft::assign(y2, weft::sigmoid(c) * c), weft::assign(y3, c));
    CHECK(g_calls.load() == once);
    std::vector<double> xv = values_of(x);
    std::vector<Expect> w1, w3;
    for (double v : xv) {
      double cv = round_float(v + 1);
      w1.push_back({round_float(cv + 1), 0});
      w3.push_back({cv, 0});
    }
    WEFT_CHECK_REPORT(check_output(y1, w1));
    WEFT_CHECK_REPORT(check_output(y3, w3));
    // Written identically twice (same tensor, same ops): also shared.
    g_calls = 0;
    y = count_op(x) * 3 + count_op(x);
    CHECK(g_calls.load() == once);
  }
}

TEST_CASE("shared: output_code prints a shared subexpression once as t0") {
  WEFT_TEST_RNG(rng);
  Tensor<double> a = random_contiguous<double>(rng, Shape{300}, Domain{-2, 2});
  Tensor<double> b = random_contiguous<double>(rng, Shape{300}, Domain{-2, 2});
  Tensor<double> y1, y2;
  auto m1 = a * weft::sigmoid(b);
  LogCapture capture;
  weft::set_logs("output_code");
  weft::fuse(weft::assign(y1, m1 + 1), weft::assign(y2, m1 * 2));
  weft::set_logs("");
  capture.restore();
  std::string text = capture.text();
  INFO(text);
  CHECK(LogCapture::count(text, "t0 = ") == 1);
  CHECK(LogCapture::count(text, "t0 = in0[i] * sigmoid(in1[i])") == 1);
  CHECK(LogCapture::count(text, "sigmoid(") == 1);
  CHECK(text.find("out0[i] = t0 + 1;") != std::string::npos);
  CHECK(text.find("out1[i] = t0 * 2;") != std::string::npos);
  CHECK(text.find("shared subexpression(s)") != std::string::npos);
  std::vector<double> av = values_of(a), bv = values_of(b), v1 = values_of(y1), v2 = values_of(y2);
  std::int64_t wrong = 0;
  for (std::size_t i = 0; i < av.size(); ++i) {
    double m = av[i] / (1 + std::exp(-bv[i]));
    double e = 6 * 0x1p-52 * (std::fabs(m) + 1);  // sigmoid (4 ulp), one product, one add: 6 ulp
    wrong += std::fabs(v1[i] - (m + 1)) > e || std::fabs(v2[i] - 2 * m) > 2 * e;
  }
  CHECK(wrong == 0);
}

}  // TEST_SUITE

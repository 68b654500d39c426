// SPDX-License-Identifier: MIT
/// @file cpu: matmul as an expression node: pointwise expressions around a matmul run as the
/// GEMM's epilogue (one pass; the fusion log says "epilogue on each output block"), checked in
/// double against the product and the epilogue computed one by one, on poisoned destinations
/// (views and tensors), over block edges, batches, transposed operands, 1 and 2 threads; the
/// statements that cannot run as an epilogue (the destination overlaps an operand, the product
/// broadcast further, a 1-D operand, several matmuls) still give the same values; errors write
/// nothing.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <weft/ops/matmul.hpp>
#include <weft/backend/threads.hpp>
#include <weft/log/log.hpp>

#include "epilogue_reference.hpp"

using namespace weft_test;

namespace {

/// What an epilogue gives at one element: its value from the exact product, and the magnitude
/// of its operands (|product| + |other operands|), which its own rounding is relative to (gelu's
/// 1 + erf(x / sqrt 2) cancels for x < 0: its error scales with |x|, not with the result).
struct EpilogueValue {
  double value, magnitude;
};

/// Checks `out` = f(product, index).value element by element: f's slope is at most `slope` (the
/// product's error is scaled by it), plus a few units of rounding of the epilogue's operands.
template <class D, class T>
void check_epilogue(const weft::TensorBase<D>& out, const TensorView<T>& a, const TensorView<T>& b,
                    const std::function<EpilogueValue(double, const std::vector<std::int64_t>&)>& f, double slope) {
  const Shape& shape = out.shape();
  const Shape batch(shape.begin(), shape.end() - 2);
  WEFT_CHECK_REPORT(check_output(out, [&](const std::vector<std::int64_t>& idx) {
    const EpilogueProduct<T> p = epilogue_product(a, b, batch, idx);
    const EpilogueValue v = f(p.value, idx);
    Expect e;
    e.want = v.value;
    e.tol = slope * p.tol + 8 * compute_eps<T>() * v.magnitude + 8 * ulp_of<D>(e.want);
    return e;
  }));
}


}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("matmul epilogue: gelu(matmul(x, w) + bias) into poisoned views, over block edges, 1 and 2 threads") {
  WEFT_TEST_RNG(rng);
  const FmaGemmAlways always;
  const int threads_before = weft::get_num_threads();
  // n and m across the blocks' edges (256 rows and columns on AVX-512, 252 rows on 16-register
  // ISAs), k across the k slices (128 and more steps); the double reference costs n k m, which
  // the aarch64 build runs under qemu.
  static const std::int64_t sizes[] = {1, 3, 17, 64, 65, 130, 257, 300}, depths[] = {1, 5, 33, 200};
  for (int iter = 0; iter < 8; ++iter) {
    weft::set_num_threads(iter % 2 ? 2 : 1);
    const std::int64_t n = rng.pick(sizes), k = rng.pick(depths), m = rng.pick(sizes);
    const TensorView<float> x = operand<float>(rng, Shape{n, k}), w = operand<float>(rng, Shape{k, m});
    const TensorView<float> bias = make_view<float>(rng, Shape{m}, Domain{}, random_layout(rng, false));
    TensorView<float> y = make_destination<float>(rng, Shape{n, m}, random_layout(rng, false));
    INFO("n ", n, ", k ", k, ", m ", m, ", threads ", weft::get_num_threads());
    CHECK(ran_as_epilogue([&] { y = weft::gelu(weft::matmul(x, w) + bias); }));
    check_epilogue<float, float>(y, x, w, [&](double p, const std::vector<std::int64_t>& idx) {
      const double bi = value_at(bias, {idx[1]});
      return EpilogueValue{epilogue_gelu(p + bi), std::fabs(p) + std::fabs(bi)};
    }, 1.2);
  }
  weft::set_num_threads(threads_before);
  // Deep enough for several k slices on AVX2 too (512 steps there), narrow to keep the reference cheap.
  const TensorView<float> x = operand<float>(rng, Shape{70, 1100}), w = operand<float>(rng, Shape{1100, 40});
  TensorView<float> y = make_destination<float>(rng, Shape{70, 40}, Layout::contiguous);
  CHECK(ran_as_epilogue([&] { y = weft::sigmoid(weft::matmul(x, w) * 0.1f); }));
  check_epilogue<float, float>(y, x, w, [](double p, const std::vector<std::int64_t>&) {
    return EpilogueValue{1 / (1 + std::exp(-0.1 * p)), 0.1 * std::fabs(p)};
  }, 0.1);
}

TEST_CASE("matmul epilogue: a transposed weight is read in place, and nothing is allocated or copied") {
  // A linear layer: y = relu(x W^T + b) with W stored [out, in], y preallocated.
  WEFT_TEST_RNG(rng);
  const FmaGemmAlways always;
  const TensorView<float> x = make_view<float>(rng, Shape{70, 300}, Domain{}, Layout::contiguous);
  const TensorView<float> weight = make_view<float>(rng, Shape{90, 300}, Domain{}, Layout::contiguous);
  const TensorView<float> bias = make_view<float>(rng, Shape{90}, Domain{}, Layout::contiguous);
  TensorView<float> y = make_destination<float>(rng, Shape{70, 90}, Layout::contiguous);
  auto& counters = weft::detail::tensor_counters();
  const std::int64_t before = counters.allocations.load() + counters.copies.load();
  CHECK(ran_as_epilogue([&] { y = weft::relu(weft::matmul(x, weight.transpose(0, 1)) + bias); }));
  CHECK(counters.allocations.load() + counters.copies.load() == before);
  check_epilogue<float, float>(y, x, weight.transpose(0, 1), [&](double p, const std::vector<std::int64_t>& idx) {
    const double v = p + value_at(bias, {idx[1]});
    return EpilogueValue{v > 0 ? v : 0, std::fabs(p) + std::fabs(value_at(bias, {idx[1]}))};
  }, 1.0);
}

TEST_CASE("matmul epilogue: batches, broadcast batch dims, a residual, double, a wider destination dtype") {
  WEFT_TEST_RNG(rng);
  const FmaGemmAlways always;
  // Batched with a broadcast batch dim and a residual of the full shape: y = 0.5 p + r.
  const TensorView<float> a = operand<float>(rng, Shape{3, 1, 33, 40}), b = operand<float>(rng, Shape{2, 40, 70});
  const TensorView<float> r = make_view<float>(rng, Shape{3, 2, 33, 70}, Domain{}, random_layout(rng, false));
  Tensor<float> y;
  CHECK(ran_as_epilogue([&] { y = weft::matmul(a, b) * 0.5f + r; }));
  REQUIRE(y.shape() == Shape{3, 2, 33, 70});
  check_epilogue<float, float>(y, a, b, [&](double p, const std::vector<std::int64_t>& idx) {
    return EpilogueValue{0.5 * p + value_at(r, idx), std::fabs(p) + std::fabs(value_at(r, idx))};
  }, 0.5);

  // double, tanh.
  const TensorView<double> da = operand<double>(rng, Shape{70, 90}), db = operand<double>(rng, Shape{90, 260});
  Tensor<double> dy;
  CHECK(ran_as_epilogue([&] { dy = weft::tanh(weft::matmul(da, db)); }));
  check_epilogue<double, double>(dy, da, db, [](double p, const std::vector<std::int64_t>&) {
    return EpilogueValue{std::tanh(p), std::fabs(p)};
  }, 1.0);

  // A float product into a double destination view (the epilogue widens).
  TensorView<double> wide = make_destination<double>(rng, Shape{33, 70}, Layout::strided);
  const TensorView<float> a2 = operand<float>(rng, Shape{33, 40});
  const TensorView<float> b2 = operand<float>(rng, Shape{40, 70});
  CHECK(ran_as_epilogue([&] { wide = weft::matmul(a2, b2) + 1.0f; }));
  check_epilogue<double, float>(wide, a2, b2, [](double p, const std::vector<std::int64_t>&) {
    return EpilogueValue{p + 1.0, std::fabs(p) + 1};
  }, 1.0);
}

TEST_CASE("matmul epilogue: statements that cannot run as an epilogue give the same values") {
  WEFT_TEST_RNG(rng);
  const FmaGemmAlways always;
  // The destination is an operand of the GEMM: x = relu(matmul(x, w)) with a square w.
  Tensor<float> x = random_contiguous<float>(rng, Shape{40, 40}, Domain{});
  Tensor<float> x0 = x.clone();  // (non-const: its view is an operand of the check)
  const TensorView<float> w = operand<float>(rng, Shape{40, 40});
  CHECK(!ran_as_epilogue([&] { x = weft::relu(weft::matmul(x, w)); }));
  check_epilogue<float, float>(x, x0.view(), w, [](double p, const std::vector<std::int64_t>&) {
    return EpilogueValue{p > 0 ? p : 0, std::fabs(p)};
  }, 1.0);

  // The destination read elementwise by the epilogue runs fused: y = matmul(a, b) + y.
  const TensorView<float> a = operand<float>(rng, Shape{20, 30}), b = operand<float>(rng, Shape{30, 50});
  Tensor<float> acc = random_contiguous<float>(rng, Shape{20, 50}, Domain{});
  const Tensor<float> acc0 = acc.clone();
  CHECK(ran_as_epilogue([&] { acc = weft::matmul(a, b) + acc; }));
  check_epilogue<float, float>(acc, a, b, [&](double p, const std::vector<std::int64_t>& idx) {
    return EpilogueValue{p + value_at(acc0, idx), std::fabs(p) + std::fabs(value_at(acc0, idx))};
  }, 1.0);

  // ... but read transposed it does not: acc = matmul(a, b) + acc^T (square).
  const TensorView<float> sa = operand<float>(rng, Shape{25, 30}), sb = operand<float>(rng, Shape{30, 25});
  Tensor<float> sq = random_contiguous<float>(rng, Shape{25, 25}, Domain{});
  const Tensor<float> sq0 = sq.clone();
  CHECK(!ran_as_epilogue([&] { sq = weft::matmul(sa, sb) + sq.transpose(0, 1); }));
  check_epilogue<float, float>(sq, sa, sb, [&](double p, const std::vector<std::int64_t>& idx) {
    const double t = value_at(sq0, {idx[1], idx[0]});
    return EpilogueValue{p + t, std::fabs(p) + std::fabs(t)};
  }, 1.0);

  // The product broadcast into a larger shape; a 1-D operand; two matmuls; an int product.
  const TensorView<float> big = make_view<float>(rng, Shape{4, 20, 50}, Domain{}, Layout::contiguous);
  Tensor<float> wider;
  CHECK(!ran_as_epilogue([&] { wider = weft::matmul(a, b) - big; }));
  check_epilogue<float, float>(wider, a.unsqueeze(0).expand(Shape{4, 20, 30}), b, [&](double p, const std::vector<std::int64_t>& idx) {
    return EpilogueValue{p - value_at(big, idx), std::fabs(p) + std::fabs(value_at(big, idx))};
  }, 1.0);
  const TensorView<float> v = make_view<float>(rng, Shape{30}, Domain{}, Layout::contiguous);
  const Tensor<float> mv = weft::exp(weft::matmul(a, v) * 0.1f);
  const Tensor<float> mv_ref = weft::exp(weft::eval(weft::matmul(a, v)) * 0.1f);
  CHECK(values_of(mv) == values_of(mv_ref));
  const Tensor<float> two = weft::matmul(a, b) + weft::matmul(a, b);
  const Tensor<float> two_ref = weft::eval(weft::eval(weft::matmul(a, b)) * 2.0f);
  CHECK(values_of(two) == values_of(two_ref));
  const TensorView<std::int32_t> ia = make_view<std::int32_t>(rng, Shape{7, 9}, Domain{-20, 20}, Layout::contiguous);
  const TensorView<std::int32_t> ib = make_view<std::int32_t>(rng, Shape{9, 5}, Domain{-20, 20}, Layout::contiguous);
  const Tensor<std::int32_t> ip = weft::matmul(ia, ib) + 3;
  for (std::int64_t i = 0; i < 7; ++i)
    for (std::int64_t j = 0; j < 5; ++j) {
      double want = 3;
      for (std::int64_t kk = 0; kk < 9; ++kk) want += value_at(ia, {i, kk}) * value_at(ib, {kk, j});
      CHECK(value_at(ip, {i, j}) == want);
    }
}

TEST_CASE("matmul epilogue: by default only products large enough to pay run as an epilogue") {
  WEFT_TEST_RNG(rng);
  const TensorView<float> a = operand<float>(rng, Shape{64, 64}), b = operand<float>(rng, Shape{64, 64});
  Tensor<float> y;
  CHECK(!ran_as_epilogue([&] { y = weft::gelu(weft::matmul(a, b)); }));  // 2^18 multiply-adds
  check_epilogue<float, float>(y, a, b, [](double p, const std::vector<std::int64_t>&) {
    return EpilogueValue{epilogue_gelu(p), std::fabs(p)};
  }, 1.2);
  // 2^22 multiply-adds or more, but half as wide as the FMA GEMM's register block
  const std::int64_t narrow = weft::detail::cpu::BlockGemmTile<float>::kCols / 2;
  const TensorView<float> deep_a = operand<float>(rng, Shape{512, 1024}), deep_b = operand<float>(rng, Shape{1024, narrow});
  CHECK(!ran_as_epilogue([&] { y = weft::matmul(deep_a, deep_b) * 2.0f; }));
  const TensorView<float> big_a = operand<float>(rng, Shape{160, 130}), big_b = operand<float>(rng, Shape{130, 110});
  CHECK(ran_as_epilogue([&] { y = weft::matmul(big_a, big_b) * 2.0f; }));  // 2.3M multiply-adds
  check_epilogue<float, float>(y, big_a, big_b, [](double p, const std::vector<std::int64_t>&) {
    return EpilogueValue{2 * p, 2 * std::fabs(p)};
  }, 2.0);
}

TEST_CASE("matmul epilogue: errors name matmul or the shapes, and write nothing") {
  WEFT_TEST_RNG(rng);
  const TensorView<float> a = operand<float>(rng, Shape{6, 5}), b = operand<float>(rng, Shape{4, 7});
  TensorView<float> y = make_destination<float>(rng, Shape{6, 7}, Layout::contiguous);
  std::string m = error_of([&] { y = weft::gelu(weft::matmul(a, b) + 1.0f); });
  CHECK(has(m, "weft::matmul"));
  CHECK(has(m, "[6, 5]"));
  CHECK(has(m, "[4, 7]"));
  const TensorView<float> b2 = operand<float>(rng, Shape{5, 7});
  const TensorView<float> bad_bias = make_view<float>(rng, Shape{6}, Domain{}, Layout::contiguous);
  m = error_of([&] { y = weft::matmul(a, b2) + bad_bias; });
  CHECK(m ==
        "weft::matmul epilogue: an operand of shape [6] cannot be broadcast with matmul's result of shape [6, 7] "
        "(numpy rule: trailing dims must be equal or 1); the expression around matmul reads every operand at the "
        "result's elements: give it a shape that broadcasts with [6, 7], such as [7] (one value per column) or "
        "[6, 1] (one per row)");
  // The product's own error comes first, and a second product is an operand like a tensor.
  CHECK(has(error_of([&] { y = weft::matmul(a, b) + bad_bias; }), "weft::matmul: shapes [6, 5] and [4, 7]"));
  m = error_of([&] { y = weft::matmul(a, b2) + weft::matmul(b2.t(), b2); });
  CHECK(has(m, "weft::matmul epilogue: an operand of shape [7, 7] cannot be broadcast with matmul's result of shape [6, 7]"));
  // Large enough to run as the GEMM's epilogue where the CPU has one: the same message.
  const TensorView<float> wide = operand<float>(rng, Shape{128, 96}), tall = operand<float>(rng, Shape{96, 200});
  Tensor<float> z;
  m = error_of([&] { z = weft::relu(weft::matmul(wide, tall) + bad_bias.unsqueeze(0)); });
  CHECK(has(m, "weft::matmul epilogue: an operand of shape [1, 6] cannot be broadcast with matmul's result of shape "
               "[128, 200]"));
  CHECK(!z.defined());
  bool untouched = true;
  for (std::int64_t i = 0; i < 6; ++i)
    for (std::int64_t j = 0; j < 7; ++j)
      untouched &= is_poison<float>(reinterpret_cast<const unsigned char*>(y.data() + i * 7 + j));
  CHECK(untouched);
}

}  // TEST_SUITE

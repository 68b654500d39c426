// SPDX-License-Identifier: MIT
/// @file cpu: matmul of float32 tensors against a double-precision reference: PyTorch's shape rules
/// (1-D operands, broadcast batch dims), transposed / strided / expanded operands, large and
/// batched products, every error. Other dtypes: matmul_dtypes_test.cpp.
#include <memory>

#include <weft/ops/matmul.hpp>

#include "matmul_reference.hpp"

using namespace weft_test;
using weft::Device;


TEST_SUITE("cpu") {

TEST_CASE("matmul: random shapes, ranks and layouts (float32, float64), on Eigen's GEMM and on weft's FMA GEMM") {
  WEFT_TEST_RNG(rng);
  random_matmuls<float>(rng, 40);
  const FmaGemmAlways fma;
  random_matmuls<float>(rng, 40);
  random_matmuls<double>(rng, 20);
}

TEST_CASE("matmul: PyTorch's rules for 1-D operands and batch broadcasting") {
  WEFT_TEST_RNG(rng);
  const struct {
    Shape a, b, out;
  } cases[] = {
      {{5}, {5}, {}},                          // dot product: rank 0
      {{3, 5}, {5}, {3}},                      // matrix x vector
      {{5}, {5, 4}, {4}},                      // vector x matrix
      {{2, 3, 5}, {5}, {2, 3}},                // batched matrix x vector
      {{5}, {2, 5, 4}, {2, 4}},                // vector x batched matrix
      {{2, 1, 3, 5}, {4, 5, 6}, {2, 4, 3, 6}}, // batch dims broadcast
      {{7, 3, 5}, {5, 6}, {7, 3, 6}},          // a shared right operand
      {{3, 0}, {0, 4}, {3, 4}},                // k = 0: zeros
      {{0, 3}, {3, 4}, {0, 4}},
  };
  for (const auto& c : cases) {
    const TensorView<float> a = operand<float>(rng, c.a), b = operand<float>(rng, c.b);
    CHECK(weft::eval(weft::matmul(a, b)).shape() == c.out);
    check_matmul<float>(a, b);
  }
  CHECK(values_of(weft::eval(weft::matmul(weft::ones<float>(Shape{3, 0}), weft::ones<float>(Shape{0, 2})))) ==
        std::vector<double>(6, 0.0));
}

TEST_CASE("matmul: large and batched products (both GEMMs, threads inside products and over batches)") {
  WEFT_TEST_RNG(rng);
  // From 2^21 multiply-adds weft's FMA GEMM: block, slice and panel edges, one product over threads.
  check_matmul<float>(operand<float>(rng, Shape{301, 515}), operand<float>(rng, Shape{515, 131}));
  check_matmul<double>(operand<double>(rng, Shape{2, 140, 260}), operand<double>(rng, Shape{260, 70}));
  check_matmul<float>(operand<float>(rng, Shape{130, 257}), operand<float>(rng, Shape{257, 70}));
  check_matmul<float>(operand<float>(rng, Shape{9, 40, 33}), operand<float>(rng, Shape{9, 33, 20}));
  check_matmul<float>(operand<float>(rng, Shape{2, 64, 300}), operand<float>(rng, Shape{300, 64}));
  // An expanded (stride-0) row block and a broadcast batch.
  const TensorView<float> row = make_view<float>(rng, Shape{1, 50}, Domain{}, Layout::contiguous).expand(Shape{20, 50});
  check_matmul<float>(row, operand<float>(rng, Shape{3, 50, 7}));
}

TEST_CASE("matmul: Eigen's kernels: vector products through strides, one product in row bands over threads") {
  WEFT_TEST_RNG(rng);
  // A vector operand runs Eigen's matrix-vector kernels: the matrix in either order, the vector
  // strided (a slice with step 3) or contiguous; a 1 x k or k x 1 matrix takes the same path.
  for (const bool transposed : {false, true})
    for (const bool strided : {false, true}) {
      INFO("matrix transposed ", transposed, ", vector strided ", strided);
      const TensorView<float> matrix = transposed ? make_view<float>(rng, Shape{300, 70}, Domain{}, Layout::contiguous).transpose(0, 1)
                                                  : make_view<float>(rng, Shape{70, 300}, Domain{}, Layout::contiguous);
      const TensorView<float> stored = make_view<float>(rng, Shape{900}, Domain{}, Layout::contiguous);
      const TensorView<float> along_300 = strided ? stored.slice(0, 0, 900, 3) : stored.slice(0, 0, 300, 1);
      const TensorView<float> along_70 = strided ? stored.slice(0, 0, 210, 3) : stored.slice(0, 0, 70, 1);
      check_matmul<float>(matrix, along_300);                      // (70 x 300) (300): m = 1
      check_matmul<float>(along_70, matrix);                       // (70) (70 x 300): n = 1
      check_matmul<float>(along_70.unsqueeze(0), matrix);          // (1 x 70) (70 x 300)
      check_matmul<double>(make_view<double>(rng, Shape{3, 1, 40}, Domain{}, Layout::contiguous),
                           make_view<double>(rng, Shape{40, 9}, Domain{}, Layout::contiguous));
    }
  // A product too narrow for the FMA GEMM (m = 9 pads to 16 columns or more on every ISA) but
  // large enough to run in row bands on 2 threads, in each operand order.
  const int threads_before = weft::get_num_threads();
  weft::set_num_threads(2);
  for (const bool ta : {false, true})
    for (const bool tb : {false, true}) {
      INFO("a transposed ", ta, ", b transposed ", tb);
      const TensorView<float> a = ta ? make_view<float>(rng, Shape{260, 1003}, Domain{}, Layout::contiguous).transpose(0, 1)
                                     : make_view<float>(rng, Shape{1003, 260}, Domain{}, Layout::contiguous);
      const TensorView<float> b = tb ? make_view<float>(rng, Shape{9, 260}, Domain{}, Layout::contiguous).transpose(0, 1)
                                     : make_view<float>(rng, Shape{260, 9}, Domain{}, Layout::contiguous);
      CHECK_FALSE(weft::detail::cpu::gemm_fma_pays<float>(1003, 260, 9));
      CHECK(weft::detail::cpu::threads_for(1003 * 260 * 9 / 64) == 2);  // row bands on both threads
      check_matmul<float>(a, b);
    }
  weft::set_num_threads(threads_before);
}

TEST_CASE("matmul: transposed operands are read in place (only the output is allocated)") {
  // A linear layer's backward: dW = dY^T X and dX = dY W, with W^T and dY^T as transposed views.
  WEFT_TEST_RNG(rng);
  auto counters = [] { return weft::detail::tensor_counters().allocations.load() + weft::detail::tensor_counters().copies.load(); };
  for (const bool ta : {false, true})
    for (const bool tb : {false, true})
      for (const Shape& batch : {Shape{}, Shape{3}, Shape{2, 1}}) {
        auto matrix = [&](std::int64_t rows, std::int64_t cols, bool transposed, const Shape& b) {
          Shape s = b;
          s.push_back(transposed ? cols : rows);
          s.push_back(transposed ? rows : cols);
          const TensorView<float> stored = make_view<float>(rng, s, Domain{}, Layout::contiguous);
          return transposed ? stored.transpose(-1, -2) : stored;
        };
        const TensorView<float> a = matrix(37, 70, ta, batch);
        const TensorView<float> b = matrix(70, 19, tb, batch.rank() == 2 ? Shape{4} : batch);  // [2, 1] with [4]: broadcast
        for (const bool fma : {false, true}) {
          INFO("a transposed ", ta, ", b transposed ", tb, ", batch ", shape_str(batch), ", FMA GEMM ", fma);
          const std::unique_ptr<FmaGemmAlways> always = fma ? std::make_unique<FmaGemmAlways>() : nullptr;
          const std::int64_t before = counters();
          const Tensor<float> c = weft::matmul(a, b);
          CHECK(counters() - before == 1);  // the output, no copy of an operand
          check_matmul<float>(a, b);
        }
      }
  // Integers too (their loop reads either order), and a transposed vector operand.
  const TensorView<std::int32_t> ia = make_view<std::int32_t>(rng, Shape{9, 13}, Domain{-50, 50}, Layout::contiguous);
  const TensorView<std::int32_t> ib = make_view<std::int32_t>(rng, Shape{11, 9}, Domain{-50, 50}, Layout::contiguous);
  check_matmul<std::int32_t>(ia.transpose(0, 1), ib.transpose(0, 1));
  check_matmul<float>(make_view<float>(rng, Shape{5, 1}, Domain{}, Layout::contiguous).transpose(0, 1),
                      make_view<float>(rng, Shape{6, 5}, Domain{}, Layout::contiguous).transpose(0, 1));
}

TEST_CASE("matmul: expression operands are evaluated first") {
  WEFT_TEST_RNG(rng);
  const TensorView<float> a = operand<float>(rng, Shape{4, 6}), b = operand<float>(rng, Shape{6, 3});
  CHECK(values_of(weft::eval(weft::matmul(a * 2.0f, b))) == values_of(weft::eval(weft::matmul(weft::eval(a * 2.0f), b))));
}

TEST_CASE("matmul: errors name both shapes") {
  const Tensor<float> a = weft::zeros<float>(Shape{2, 3}), b = weft::zeros<float>(Shape{4, 5});
  std::string m = error_of([&] { weft::eval(weft::matmul(a, b)); });
  CHECK(has(m, "weft::matmul"));
  CHECK(has(m, "[2, 3]"));
  CHECK(has(m, "[4, 5]"));
  m = error_of([&] { weft::eval(weft::matmul(weft::zeros<float>(Shape{2, 2, 3}), weft::zeros<float>(Shape{3, 3, 4}))); });
  CHECK(has(m, "batch dims"));
  CHECK(has(m, "of shapes [2], [3]"));
  CHECK(has(m, "[2, 2, 3]"));
  CHECK(has(m, "[3, 3, 4]"));
  m = error_of([&] { weft::eval(weft::matmul(weft::zeros<float>(Shape{}), a)); });
  CHECK(has(m, "at least 1 dim"));
  CHECK(has(m, "[2, 3]"));
  m = error_of([&] { weft::eval(weft::matmul(Tensor<float>(), a)); });
  CHECK(has(m, "empty"));
  m = error_of([&] { weft::eval(weft::matmul(weft::zeros<float>(Shape{3}), weft::zeros<float>(Shape{4}))); });
  CHECK(has(m, "[3]"));
  CHECK(has(m, "[4]"));
  auto fake = std::make_shared<weft::Storage>(nullptr, 0, Device::cuda(), nullptr);
  const weft::TensorView<float> gpu(fake, Shape{3, 2}, weft::contiguous_strides(Shape{3, 2}), 0);
  m = error_of([&] { weft::eval(weft::matmul(a, gpu)); });
  CHECK(has(m, "cuda:0"));
  CHECK(has(m, "[3, 2]"));
  const weft::TensorView<float> square(fake, Shape{2, 2}, weft::contiguous_strides(Shape{2, 2}), 0);
  m = error_of([&] { weft::eval(weft::matmul(square, square)); });
  CHECK(has(m, "weft::matmul"));
  CHECK(has(m, "nvcc"));
}

}  // TEST_SUITE

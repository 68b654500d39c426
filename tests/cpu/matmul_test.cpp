// SPDX-License-Identifier: MIT
/// @file cpu: matmul of float32 tensors against a double-precision reference: PyTorch's shape rules
/// (1-D operands, broadcast batch dims), transposed / strided / expanded operands, large and
/// batched products, every error. Other dtypes: matmul_dtypes_test.cpp, matmul_half_test.cpp.
#include <memory>

#include <weft/dense/matmul.hpp>

#include "dense_reference.hpp"
#include "reference.hpp"

using namespace weft_test;
using weft::Device;

namespace {

/// Machine epsilon of the type T multiplies in (float for 16-bit floats; integers are exact).
template <class T>
constexpr double compute_eps() {
  if constexpr (std::is_same_v<T, double>) return eps_of<double>();
  else if constexpr (is_float_type_v<T>) return eps_of<float>();
  else return 0.0;
}

/// torch.matmul's result shape, worked out independently; false when the shapes do not fit.
bool matmul_shape(const Shape& a, const Shape& b, Shape& out, std::int64_t& n, std::int64_t& k, std::int64_t& m,
                  Shape& batch) {
  if (a.rank() == 0 || b.rank() == 0) return false;
  n = a.rank() == 1 ? 1 : a[a.rank() - 2];
  k = a[a.rank() - 1];
  m = b.rank() == 1 ? 1 : b[b.rank() - 1];
  if ((b.rank() == 1 ? b[0] : b[b.rank() - 2]) != k) return false;
  const Shape ba(a.begin(), a.end() - std::min(a.rank(), 2)), bb(b.begin(), b.end() - std::min(b.rank(), 2));
  if (!broadcast_shapes({ba, bb}, batch)) return false;
  out = batch;
  if (a.rank() > 1) out.push_back(n);
  if (b.rank() > 1) out.push_back(m);
  return true;
}

/// Checks matmul(a, b) element by element: each is a dot product of length k, computed in double
/// (compensated). Eigen's GEMM accumulates along k in blocks, not pairwise, so the bound is the
/// worst case of any summation order, (k + 2) eps sum_k |a b| (the +2: the products' own rounding),
/// then the rounding to T (16-bit floats multiply in float and round once).
template <class T>
void check_matmul(const Tensor<T>& a, const Tensor<T>& b) {
  Shape want_shape, batch;
  std::int64_t n, k, m;
  REQUIRE(matmul_shape(a.shape(), b.shape(), want_shape, n, k, m, batch));
  INFO("dtype ", type_name<T>(), ", a ", shape_str(a.shape()), ", b ", shape_str(b.shape()));
  const Tensor<T> c = weft::matmul(a, b);
  REQUIRE(c.shape() == want_shape);
  constexpr double eps = compute_eps<T>();
  WEFT_CHECK_REPORT(check_output(c, [&](const std::vector<std::int64_t>& idx) {
    // idx = batch..., [i if a is a matrix], [j if b is a matrix]
    std::vector<std::int64_t> bi(idx.begin(), idx.begin() + batch.rank());
    const std::int64_t i = a.dim() > 1 ? idx[std::size_t(batch.rank())] : 0;
    const std::int64_t j = b.dim() > 1 ? idx.back() : 0;
    CompensatedSum dot, mag;
    for (std::int64_t kk = 0; kk < k; ++kk) {
      std::vector<std::int64_t> ia = bi, ib = bi;
      if (a.dim() > 1) ia.push_back(i);
      ia.push_back(kk);
      ib.push_back(kk);
      if (b.dim() > 1) ib.push_back(j);
      if (a.dim() == 1) ia = {kk};
      if (b.dim() == 1) ib = {kk};
      const double x = value_at(a, ia) * value_at(b, ib);
      dot.add(x);
      mag.add(std::fabs(x));
    }
    Expect e;
    e.want = dot.value();
    e.tol = double(k + 2) * eps * mag.value() + ulp_of<T>(e.want);
    return e;
  }));
}

/// A random operand of `shape` whose last two dims may be transposed in memory.
template <class T>
Tensor<T> operand(Rng& rng, const Shape& shape) {
  Domain d;
  if constexpr (std::is_integral_v<T>) d = Domain{-50, 50};
  if (shape.rank() >= 2 && rng.chance(0.3)) {  // a transposed view: column-major matrices
    Shape t = shape;
    std::swap(t[t.rank() - 1], t[t.rank() - 2]);
    return make_view<T>(rng, t, d, Layout::contiguous).transpose(-1, -2);
  }
  return make_view<T>(rng, shape, d, random_layout(rng, false));
}

template <class T>
void random_matmuls(Rng& rng, int iterations) {
  static const std::int64_t sizes[] = {0, 1, 1, 2, 3, 5, 8, 16, 17, 33};
  for (int iter = 0; iter < iterations; ++iter) {
    const std::int64_t n = rng.pick(sizes), k = rng.pick(sizes), m = rng.pick(sizes);
    const int ra = int(rng.integer(1, 4)), rb = int(rng.integer(1, 4));
    // Batch dims that broadcast: each dim of the longer batch, some set to 1 in one operand.
    const Shape batch = random_shape(rng, std::max(ra, rb) - 2 < 0 ? 0 : std::max(ra, rb) - 2,
                                     std::max(0, std::max(ra, rb) - 2), 64, 0.0);
    auto make_shape = [&](int rank, std::int64_t rows, std::int64_t cols, bool is_a) {
      if (rank == 1) return Shape{is_a ? cols : rows};
      Shape s;
      const int nb = std::min(rank - 2, batch.rank());
      for (int d = batch.rank() - nb; d < batch.rank(); ++d) s.push_back(rng.chance(0.3) ? 1 : batch[d]);
      s.push_back(rows);
      s.push_back(cols);
      return s;
    };
    const Shape sa = make_shape(ra, n, k, true), sb = make_shape(rb, k, m, false);
    check_matmul<T>(operand<T>(rng, sa), operand<T>(rng, sb));
  }
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("matmul: random shapes, ranks and layouts (float32)") {
  using T = float;
  WEFT_TEST_RNG(rng);
  random_matmuls<T>(rng, 40);
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
    const Tensor<float> a = operand<float>(rng, c.a), b = operand<float>(rng, c.b);
    CHECK(weft::matmul(a, b).shape() == c.out);
    check_matmul<float>(a, b);
  }
  CHECK(values_of(weft::matmul(weft::ones<float>(Shape{3, 0}), weft::ones<float>(Shape{0, 2}))) ==
        std::vector<double>(6, 0.0));
}

TEST_CASE("matmul: large and batched products (Eigen's blocked kernels, threads over batches)") {
  WEFT_TEST_RNG(rng);
  check_matmul<float>(operand<float>(rng, Shape{130, 257}), operand<float>(rng, Shape{257, 70}));
  check_matmul<float>(operand<float>(rng, Shape{9, 40, 33}), operand<float>(rng, Shape{9, 33, 20}));
  check_matmul<float>(operand<float>(rng, Shape{2, 64, 300}), operand<float>(rng, Shape{300, 64}));
  // An expanded (stride-0) row block and a broadcast batch.
  const Tensor<float> row = make_view<float>(rng, Shape{1, 50}, Domain{}, Layout::contiguous).expand(Shape{20, 50});
  check_matmul<float>(row, operand<float>(rng, Shape{3, 50, 7}));
}

TEST_CASE("matmul: expression operands are evaluated first") {
  WEFT_TEST_RNG(rng);
  const Tensor<float> a = operand<float>(rng, Shape{4, 6}), b = operand<float>(rng, Shape{6, 3});
  CHECK(values_of(weft::matmul(a * 2.0f, b)) == values_of(weft::matmul(weft::eval(a * 2.0f), b)));
}

TEST_CASE("matmul: errors name both shapes") {
  const Tensor<float> a = weft::zeros<float>(Shape{2, 3}), b = weft::zeros<float>(Shape{4, 5});
  std::string m = error_of([&] { weft::matmul(a, b); });
  CHECK(has(m, "weft::matmul"));
  CHECK(has(m, "[2, 3]"));
  CHECK(has(m, "[4, 5]"));
  m = error_of([&] { weft::matmul(weft::zeros<float>(Shape{2, 2, 3}), weft::zeros<float>(Shape{3, 3, 4})); });
  CHECK(has(m, "batch dims [2]"));
  CHECK(has(m, "[3]"));
  CHECK(has(m, "[2, 2, 3]"));
  m = error_of([&] { weft::matmul(weft::zeros<float>(Shape{}), a); });
  CHECK(has(m, "at least 1 dim"));
  CHECK(has(m, "[2, 3]"));
  m = error_of([&] { weft::matmul(Tensor<float>(), a); });
  CHECK(has(m, "empty"));
  m = error_of([&] { weft::matmul(weft::zeros<float>(Shape{3}), weft::zeros<float>(Shape{4})); });
  CHECK(has(m, "[3]"));
  CHECK(has(m, "[4]"));
  auto fake = std::make_shared<weft::Storage>(nullptr, 0, Device::cuda(), nullptr);
  const Tensor<float> gpu(fake, Shape{3, 2}, weft::contiguous_strides(Shape{3, 2}), 0);
  m = error_of([&] { weft::matmul(a, gpu); });
  CHECK(has(m, "cuda:0"));
  CHECK(has(m, "[3, 2]"));
  const Tensor<float> square(fake, Shape{2, 2}, weft::contiguous_strides(Shape{2, 2}), 0);
  m = error_of([&] { weft::matmul(square, square); });
  CHECK(has(m, "weft::matmul"));
  CHECK(has(m, "nvcc"));
}

}  // TEST_SUITE

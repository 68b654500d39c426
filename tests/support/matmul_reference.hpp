// SPDX-License-Identifier: MIT
/// @file Test helpers for matmul: torch.matmul's result shape worked out independently, a
/// double-precision batched reference and the tolerance of a naive run in the compute type.
#pragma once

#include <weft/ops/matmul.hpp>

#include "dense_reference.hpp"
#include "reference.hpp"

namespace weft_test {

/// torch.matmul's result shape, worked out independently; false when the shapes do not fit.
inline bool matmul_shape(const Shape& a, const Shape& b, Shape& out, std::int64_t& n, std::int64_t& k, std::int64_t& m,
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

/// Every float and double product through weft's FMA GEMM while alive (by default only those
/// large enough to pay: cpu::gemm_fma_pays; smaller ones run Eigen's), so that small shapes test
/// its block edges, padding and strided packing.
struct FmaGemmAlways {
  FmaGemmAlways() { weft::detail::cpu::gemm_fma_always = true; }
  ~FmaGemmAlways() { weft::detail::cpu::gemm_fma_always = false; }
  FmaGemmAlways(const FmaGemmAlways&) = delete;
  FmaGemmAlways& operator=(const FmaGemmAlways&) = delete;
};

/// Checks matmul(a, b) element by element: each is a dot product of length k, computed in double
/// (compensated). Eigen's GEMM accumulates along k in blocks, not pairwise, so the bound is the
/// worst case of any summation order, (k + 2) eps sum_k |a b| (the +2: the products' own rounding),
/// then the rounding to T (16-bit floats multiply in float and round once).
template <class T>
void check_matmul(const weft::TensorBase<T>& a, const weft::TensorBase<T>& b) {
  Shape want_shape, batch;
  std::int64_t n, k, m;
  REQUIRE(matmul_shape(a.shape(), b.shape(), want_shape, n, k, m, batch));
  INFO("dtype ", type_name<T>(), ", a ", shape_str(a.shape()), ", b ", shape_str(b.shape()));
  const Tensor<T> c = weft::matmul(a.view(), b.view());
  REQUIRE(c.shape() == want_shape);
  constexpr double eps = compute_eps<T>();
  WEFT_CHECK_REPORT(check_output(c, [&](const std::vector<std::int64_t>& idx) {
    // idx = batch..., [i if a is a matrix], [j if b is a matrix]; a's and b's indices are built
    // once and only their k slot moves (vectors built per term were 3/4 of a sanitizer run).
    const std::vector<std::int64_t> bi(idx.begin(), idx.begin() + batch.rank());
    std::vector<std::int64_t> ia, ib;  // a vector operand has no batch index
    if (a.dim() > 1) ia = bi, ia.push_back(idx[std::size_t(batch.rank())]);
    if (b.dim() > 1) ib = bi;
    const std::size_t ka = ia.size(), kb = ib.size();  // the k slots
    ia.push_back(0);
    ib.push_back(0);
    if (b.dim() > 1) ib.push_back(idx.back());
    CompensatedSum dot, mag;
    for (std::int64_t kk = 0; kk < k; ++kk) {
      ia[ka] = kk;
      ib[kb] = kk;
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
TensorView<T> operand(Rng& rng, const Shape& shape) {
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

}  // namespace weft_test

// SPDX-License-Identifier: MIT
/// @file The CPU GEMM executor: batched row-major matrix products on Eigen's GEMM and matrix-vector kernels, called directly (integers: a plain loop), OpenMP over the batch or over each product's rows.
///
/// Eigen's kernels are called through their run functions (Eigen::internal's
/// general_matrix_matrix_product and general_matrix_vector_product, unchanged since Eigen 3.3),
/// not through `C.noalias() = A * B`: the product expression instantiates, for each of the four
/// operand orders, a coefficient loop for tiny products, two matrix-vector paths and the GEMM,
/// with threading of its own. A file that calls weft::matmul compiled 3.0 s longer for them
/// (g++ 12 -O2, against 0.9 s for the direct calls); the kernels and their blocking are the same.
///
/// With WEFT_PRECOMPILED_KERNELS defined (a program that links the weft_kernels library, whose
/// src/kernels.cpp instantiates eigen_product for float and double), this header only declares
/// eigen_product: no file of the program parses Eigen's headers (0.6 s each) or compiles its kernels.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "weft/backend/cpu/gemm/batch.hpp"
#include "weft/backend/cpu/pointwise.hpp"
#include "weft/core/shape.hpp"

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp), and leaving Eigen's
// headers out of it saves each CUDA translation unit their parse, twice per architecture.
#if !defined(__CUDA_ARCH__)

// GCC 12 warns that the AVX-512 intrinsics Eigen's packing of a transposed operand inlines read an
// uninitialized register (their _mm512_undefined_ps() pass-through, GCC bug 105593, fixed in 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace weft::detail::cpu {

/// c (n x m, row-major, rows m apart) = a b on `threads` threads, each a band of c's rows: a(i,
/// kk) at a[i lda + kk] (a_col_major: a[i + kk lda]), b likewise with ldb. A vector product (n or
/// m of 1) runs Eigen's matrix-vector kernel on one thread: c = a b, or c^T = b^T a^T when a is
/// the vector.
template <class S>
void eigen_product(const S* a, std::int64_t lda, bool a_col_major, const S* b, std::int64_t ldb, bool b_col_major,
                   S* c, std::int64_t n, std::int64_t k, std::int64_t m, int threads);

}  // namespace weft::detail::cpu

#if !defined(WEFT_PRECOMPILED_KERNELS)
#include <Eigen/Core>

namespace weft::detail::cpu {

/// Eigen's storage order of an operand stored row-major (false) or column-major (true).
template <bool kColMajor>
inline constexpr int kEigenOrder = kColMajor ? Eigen::ColMajor : Eigen::RowMajor;

/// c (n x m, row-major, rows m apart) = a b on the calling thread, through Eigen's blocked GEMM:
/// a(i, kk) at a[i lda + kk] (kColMajorA: a[i + kk lda]), b likewise with ldb.
template <class S, bool kColMajorA, bool kColMajorB>
void eigen_gemm(const S* a, std::int64_t lda, const S* b, std::int64_t ldb, S* c, std::int64_t n, std::int64_t k,
                std::int64_t m) {
  using Gemm = Eigen::internal::general_matrix_matrix_product<Eigen::Index, S, kEigenOrder<kColMajorA>, false, S,
                                                              kEigenOrder<kColMajorB>, false, Eigen::RowMajor, 1>;
  Eigen::internal::gemm_blocking_space<Eigen::RowMajor, S, S, Eigen::Dynamic, Eigen::Dynamic, Eigen::Dynamic> blocking(
      n, m, k, 1, true);
  std::fill(c, c + n * m, S(0));  // the kernel adds: c += 1 * a b
  Gemm::run(n, m, k, a, lda, b, ldb, c, 1, m, S(1), blocking, nullptr);
}

/// y (rows) = M x through Eigen's matrix-vector kernels: M(i, j) at mat[i ld + j] (col_major:
/// mat[i + j ld]), x(j) at x[j x_stride], y contiguous. A GEMM pads a vector to a register block
/// (measured 2-6x slower than these kernels at 768 x 768 and 4096 x 64).
template <class S>
void eigen_gemv(const S* mat, std::int64_t ld, bool col_major, const S* x, std::int64_t x_stride, S* y,
                std::int64_t rows, std::int64_t cols) {
  using Eigen::internal::const_blas_data_mapper;
  using Eigen::internal::general_matrix_vector_product;
  std::fill(y, y + rows, S(0));  // the kernels add: y += 1 * M x
  if (col_major) {
    using MatMapper = const_blas_data_mapper<S, Eigen::Index, Eigen::ColMajor>;
    using VecMapper = const_blas_data_mapper<S, Eigen::Index, Eigen::RowMajor>;  // x(j, 0) at x[j x_stride]
    general_matrix_vector_product<Eigen::Index, S, MatMapper, Eigen::ColMajor, false, S, VecMapper, false>::run(
        rows, cols, MatMapper(mat, ld), VecMapper(x, x_stride), y, 1, S(1));
  } else {
    // The row-major kernel reads x contiguous.
    std::vector<S> packed;
    if (x_stride != 1) {
      packed.resize(std::size_t(cols));
      for (std::int64_t j = 0; j < cols; ++j) packed[std::size_t(j)] = x[j * x_stride];
      x = packed.data();
    }
    using MatMapper = const_blas_data_mapper<S, Eigen::Index, Eigen::RowMajor>;
    using VecMapper = const_blas_data_mapper<S, Eigen::Index, Eigen::ColMajor>;
    general_matrix_vector_product<Eigen::Index, S, MatMapper, Eigen::RowMajor, false, S, VecMapper, false>::run(
        rows, cols, MatMapper(mat, ld), VecMapper(x, 1), y, 1, S(1));
  }
}

template <class S>
void eigen_product(const S* a, std::int64_t lda, bool a_col_major, const S* b, std::int64_t ldb, bool b_col_major,
                   S* c, std::int64_t n, std::int64_t k, std::int64_t m, int threads) {
  if (m == 1) return eigen_gemv(a, lda, a_col_major, b, b_col_major ? 1 : ldb, c, n, k);
  // b^T is column-major where b is row-major (and the reverse); a's one row steps by lda when a is column-major.
  if (n == 1) return eigen_gemv(b, ldb, !b_col_major, a, a_col_major ? lda : 1, c, m, k);
  auto rows = [&](std::int64_t i0, std::int64_t i1) {
    const S* ai = a + (a_col_major ? i0 : i0 * lda);
    S* ci = c + i0 * m;
    if (!a_col_major && !b_col_major) eigen_gemm<S, false, false>(ai, lda, b, ldb, ci, i1 - i0, k, m);
    else if (a_col_major && !b_col_major) eigen_gemm<S, true, false>(ai, lda, b, ldb, ci, i1 - i0, k, m);
    else if (!a_col_major) eigen_gemm<S, false, true>(ai, lda, b, ldb, ci, i1 - i0, k, m);
    else eigen_gemm<S, true, true>(ai, lda, b, ldb, ci, i1 - i0, k, m);
  };
  threads = int(std::min<std::int64_t>(threads, n));
  if (threads <= 1) return rows(0, n);
  WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) schedule(static))
  for (int t = 0; t < threads; ++t) rows(n * t / threads, n * (t + 1) / threads);
}

}  // namespace weft::detail::cpu
#endif  // !defined(WEFT_PRECOMPILED_KERNELS)

namespace weft::detail::cpu {

/// c[b] = a[b] * b[b] for every batch index b of `batch`: a[b] is n x k at a + sum_d coord_d *
/// a_batch[d], row-major with rows lda apart (a_col_major: column-major with columns lda apart, as
/// a transposed view of a row-major tensor is); likewise b[b] (k x m, ldb, b_col_major); c is
/// contiguous (batch..., n, m). The leading dimension is at least the row (column) length (the
/// caller copies other layouts). Floating types go through Eigen's kernels (eigen_product), which
/// pack either order of either operand into their own blocks: a transposed operand costs no copy.
/// Integer products (rare, and exact in any order) use a plain row-times-matrix loop, which the
/// compiler vectorizes along the contiguous rows of b and c, and which saves each integer type
/// the compile time of Eigen's GEMM kernels.
template <class S>
void gemm_batched(const S* a, std::int64_t lda, const Strides& a_batch, const S* b, std::int64_t ldb,
                  const Strides& b_batch, S* c, const Shape& batch, std::int64_t n, std::int64_t k, std::int64_t m,
                  bool a_col_major = false, bool b_col_major = false) {
  const std::int64_t count = batch.numel();
  auto operands = [&](std::int64_t bi, const S*& pa, const S*& pb) {
    std::int64_t oa, ob;
    batch_offsets(bi, batch, a_batch, b_batch, oa, ob);
    pa = a + oa;
    pb = b + ob;
  };
  if constexpr (std::is_integral_v<S>) {
    // c[bi, i, :] = sum_kk a[bi, i, kk] * b[bi, kk, :], one (batch, row) per iteration.
    const std::int64_t a_row = a_col_major ? 1 : lda, a_col = a_col_major ? lda : 1;
    const std::int64_t b_row = b_col_major ? 1 : ldb, b_col = b_col_major ? ldb : 1;
    const int threads = threads_for(count * n * k * m);
    WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) schedule(static) if (threads > 1))
    for (std::int64_t row = 0; row < count * n; ++row) {
      const std::int64_t bi = row / n, i = row % n;
      const S *pa, *pb;
      operands(bi, pa, pb);
      S* ci = c + row * m;
      for (std::int64_t j = 0; j < m; ++j) ci[j] = 0;
      for (std::int64_t kk = 0; kk < k; ++kk) {
        const S x = pa[i * a_row + kk * a_col];
        const S* bk = pb + kk * b_row;
        for (std::int64_t j = 0; j < m; ++j) ci[j] += x * bk[j * b_col];
      }
    }
  } else {
    // Row bands pay from 2^18 multiply-adds a thread (16 per element of threads_for's grain):
    // 96^3 on 2 threads 1.45x one thread, 64^3 none (Zen 5, weft's bands of Eigen's kernel;
    // the packed GEMMs' grain of 64 left these products on one thread, 1.35-1.6x slower).
    for_each_packed_product(
        count, n, k, m,
        [&](std::int64_t bi, int threads) {
          const S *pa, *pb;
          operands(bi, pa, pb);
          eigen_product(pa, lda, a_col_major, pb, ldb, b_col_major, c + bi * n * m, n, k, m, threads);
        },
        16);
  }
}

}  // namespace weft::detail::cpu

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif  // !defined(__CUDA_ARCH__)

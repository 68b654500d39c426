// SPDX-License-Identifier: MIT
/// @file The CUDA GEMM executor: batched row-major products through cublasGemmStridedBatchedEx, one cached cuBLAS handle per device (nvcc only).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <mutex>
#include <type_traits>
#include <vector>

#include "weft/backend/cuda/runtime.cuh"
#include "weft/core/device.hpp"
#include "weft/core/dtype.hpp"
#include "weft/core/error.hpp"

namespace weft::detail::cuda {

/// Throws weft::CudaError naming the call when a cuBLAS call failed.
inline void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw CudaError(cat("weft: cuBLAS call ", what, " failed: ", cublasGetStatusName(status), " (",
                        cublasGetStatusString(status), ")"));
}

/// The cuBLAS handle of `device`, created on first use and kept for the
/// process's lifetime (destroying it at exit could run after the CUDA
/// context is gone). Calls run on the legacy default stream, like the rest
/// of weft's CUDA work.
inline cublasHandle_t cublas_handle(int device) {
  static std::mutex mutex;
  static std::vector<cublasHandle_t> handles;
  std::lock_guard<std::mutex> lock(mutex);
  if (device >= int(handles.size())) handles.resize(std::size_t(device) + 1, nullptr);
  if (!handles[std::size_t(device)]) {
    CudaDeviceGuard guard(device);
    cublasHandle_t h = nullptr;
    check_cublas(cublasCreate(&h), "cublasCreate");
    check_cublas(cublasSetStream(h, 0), "cublasSetStream");
    handles[std::size_t(device)] = h;
  }
  return handles[std::size_t(device)];
}

/// cuBLAS's data type and compute type for T: 16-bit floats multiply in float, double in double.
template <class T>
struct CublasTypes {
  static constexpr cudaDataType_t data = std::is_same_v<T, float>    ? CUDA_R_32F
                                         : std::is_same_v<T, double> ? CUDA_R_64F
                                         : std::is_same_v<T, half>   ? CUDA_R_16F
                                                                     : CUDA_R_16BF;
  static constexpr cublasComputeType_t compute = std::is_same_v<T, double> ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  using Scale = std::conditional_t<std::is_same_v<T, double>, double, float>;
  static_assert(is_floating_v<T>, "cuBLAS GEMMs take float, double, half or bfloat16");
};

/// c[i] = a[i] * b[i] for i < count: a[i] (n x k) at a + i * stride_a, row-major with rows lda
/// apart (a_col_major: column-major, columns lda apart: a transposed view), b[i] (k x m, ldb,
/// b_col_major) at b + i * stride_b, c contiguous row-major (count, n, m). cuBLAS is column-major,
/// and a row-major matrix read as column-major is its transpose, so it computes c^T = b^T a^T:
/// a row-major operand goes in untransposed (OP_N), a column-major one as OP_T; no operand is
/// copied. Needs n, m, k >= 1 and each ld at least its row (column) length.
template <class T>
void gemm_strided_batched(const T* a, std::int64_t lda, std::int64_t stride_a, const T* b, std::int64_t ldb,
                          std::int64_t stride_b, T* c, std::int64_t count, std::int64_t n, std::int64_t k,
                          std::int64_t m, Device device, bool a_col_major = false, bool b_col_major = false) {
  using Types = CublasTypes<T>;
  CudaDeviceGuard guard(device.index());
  const typename Types::Scale alpha = 1, beta = 0;
  check_cublas(cublasGemmStridedBatchedEx(cublas_handle(device.index()), b_col_major ? CUBLAS_OP_T : CUBLAS_OP_N,
                                          a_col_major ? CUBLAS_OP_T : CUBLAS_OP_N, int(m), int(n),
                                          int(k), &alpha, b, Types::data, int(ldb), (long long)stride_b, a,
                                          Types::data, int(lda), (long long)stride_a, &beta, c, Types::data, int(m),
                                          (long long)(n * m), int(count), Types::compute, CUBLAS_GEMM_DEFAULT),
               "cublasGemmStridedBatchedEx");
}

}  // namespace weft::detail::cuda

// SPDX-License-Identifier: MIT
/// @file CUDA pieces of the benchmarks' .cu builds: error checks, cudaEvent timing, device tensors
/// and lists, the device-to-device copy roofline and its report rows.
#pragma once

#if !defined(__CUDACC__)
#error "bench_cuda.hpp is for the benchmarks' CUDA builds (bench/NAME_cuda.cu)"
#endif

#include <cuda_runtime.h>

#include "bench_common.hpp"

namespace weft_bench {

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s failed: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

/// Times f on the default stream with CUDA events (f only enqueues work).
struct EventTimer {
  cudaEvent_t start, stop;
  EventTimer() {
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
  }
  ~EventTimer() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  template <class F>
  double ms(F&& f) {
    check(cudaEventRecord(start), "cudaEventRecord");
    f();
    check(cudaEventRecord(stop), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float t = 0;
    check(cudaEventElapsedTime(&t, start, stop), "cudaEventElapsedTime");
    return t;
  }
};

template <class T>
weft::Tensor<T> make_cuda_tensor(std::int64_t n, std::uint64_t seed) {
  std::vector<T> host(static_cast<std::size_t>(n));
  WEFT_PRAGMA_OMP(omp parallel for schedule(static))
  for (std::int64_t i = 0; i < n; ++i) host[std::size_t(i)] = T(hashed(seed, std::uint64_t(i), -4.0f, 4.0f));
  weft::Tensor<T> t = weft::empty<T>({n}, weft::Device::cuda());
  check(cudaMemcpy(t.data(), host.data(), std::size_t(n) * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  return t;
}

template <class T>
double max_abs_diff_cuda(const weft::TensorBase<T>& x, const weft::TensorBase<T>& y, std::int64_t sample) {
  std::vector<T> hx(static_cast<std::size_t>(sample)), hy(static_cast<std::size_t>(sample));
  check(cudaMemcpy(hx.data(), x.data(), std::size_t(sample) * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaMemcpy(hy.data(), y.data(), std::size_t(sample) * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
  double m = 0;
  for (std::int64_t i = 0; i < sample; ++i) m = std::max(m, std::fabs(double(float(hx[i])) - double(float(hy[i]))));
  return m;
}

struct CudaContext {
  int warmup, reps;
  EventTimer* timer;
  char* copy_src;
  char* copy_dst;
  Report* report;
};

inline Variant device_copy(CudaContext& ctx, double bytes) {
  std::size_t half = std::size_t(bytes / 2);
  return {"copy: cudaMemcpy D2D", [&ctx, half] {
            return ctx.timer->ms([&] {
              check(cudaMemcpyAsync(ctx.copy_dst, ctx.copy_src, half, cudaMemcpyDeviceToDevice), "cudaMemcpyAsync");
            });
          }};
}

inline void report_cuda(CudaContext& ctx, const std::string& workload, std::int64_t elements, double bpe, const Variant& copy,
                 const std::vector<Variant*>& variants) {
  double copy_gbps = double(elements) * bpe / (copy.med() * 1e-3) / 1e9;
  Row c{workload, copy.name, elements, bpe, copy.med(), copy.min()};
  ctx.report->rows.push_back(c);
  print_row(c, copy_gbps);
  for (const Variant* v : variants) {
    Row r{workload, v->name, elements, bpe, v->med(), v->min()};
    ctx.report->rows.push_back(r);
    print_row(r, copy_gbps);
  }
}

/// True when a CUDA device is visible; otherwise prints that `program` has nothing to run.
inline bool have_cuda_device(const char* program) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    std::printf("weft %s benchmark, cuda: no CUDA device visible; nothing to run\n", program);
    return false;
  }
  return true;
}

}  // namespace weft_bench

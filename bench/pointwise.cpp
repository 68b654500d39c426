// SPDX-License-Identifier: MIT
/// @file Pointwise benchmark: fused weft kernels against a plain copy, Eigen's Tensor module and op-by-op evaluation.
//
// Workloads:
//   1. y = a * sigmoid(b) + c * d, fp32, 16M elements     (20 bytes/element move)
//   2. the same in bfloat16                               (10 bytes/element)
//   3. y = x + row over a 4096 x 4096 fp32 matrix         ( 8 bytes/element)
// Each is run beside
//   (a) a parallel copy of the same number of bytes (memcpy per thread, a
//       plain vector loop, a non-temporal-store loop; the best is the roofline),
//   (b) Eigen's Tensor module on a ThreadPoolDevice with the same thread count,
//   (c) the chain evaluated op by op with every intermediate materialized
//       (t1 = sigmoid(b); t2 = a*t1; t3 = c*d; y = t2+t3), what an eager framework does.
// Variants are interleaved (A B C A B C ...) and medians are reported,
// because the machines this runs on are noisy; the targets use the median
// over rounds of the ratio within a round. On a machine shared with other
// work, `chrt -f 1 pointwise` (real-time priority, Linux) keeps the other
// processes from taking the benchmark's cores mid-run.
//
// The same file is the CUDA benchmark when bench/pointwise_cuda.cu includes
// it: there --device cuda times weft's CUDA kernels with cudaEvents against a
// device-to-device copy (256M elements).

// Eigen's Tensor module first: EIGEN_USE_THREADS must be set before any
// Eigen header (weft's own GEMM includes Eigen/Core).
#if !defined(__CUDACC__)
#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>
#endif

#include "bench_common.hpp"
#if defined(__CUDACC__)
#include "bench_cuda.hpp"
#endif

namespace {

using namespace weft_bench;

/// Per-round samples (ms) of the variants the targets compare.
struct ChainResult {
  std::vector<double> fused, eigen, op_by_op, copy;
};

// =====================================================================
// CPU
// =====================================================================
#if !defined(__CUDACC__)

// ---- Eigen ------------------------------------------------------------------

template <class T>
using EMap1 = Eigen::TensorMap<Eigen::Tensor<T, 1, Eigen::RowMajor, Eigen::Index>, Eigen::Aligned64>;
template <class T>
using EMap2 = Eigen::TensorMap<Eigen::Tensor<T, 2, Eigen::RowMajor, Eigen::Index>, Eigen::Aligned64>;

template <class T>
EMap1<T> emap(weft::Tensor<T>& t) {
  return EMap1<T>(t.data(), t.numel());
}
inline EMap1<Eigen::bfloat16> emap(weft::Tensor<weft::bfloat16>& t) {
  static_assert(sizeof(Eigen::bfloat16) == sizeof(weft::bfloat16));
  return EMap1<Eigen::bfloat16>(reinterpret_cast<Eigen::bfloat16*>(t.data()), t.numel());
}

struct CpuContext {
  int threads;
  int warmup;
  int reps;
  Eigen::ThreadPool* pool;
  Eigen::ThreadPoolDevice* device;
  float* copy_src;
  float* copy_dst;
  Report* report;
};

// ---- workload 1 and 2: y = a * sigmoid(b) + c * d ------------------------------

template <class T>
ChainResult bench_chain(CpuContext& ctx, std::int64_t n, const char* workload) {
  using ET = std::conditional_t<std::is_same_v<T, weft::bfloat16>, Eigen::bfloat16, T>;
  const double bpe = 5.0 * sizeof(T);
  weft::Shape shape{n};
  weft::Tensor<T> a = make_tensor<T>(shape, 1), b = make_tensor<T>(shape, 2), c = make_tensor<T>(shape, 3),
                  d = make_tensor<T>(shape, 4);
  weft::Tensor<T> y_fused = make_tensor<T>(shape, 5), y_eigen = make_tensor<T>(shape, 6),
                  y_eager = make_tensor<T>(shape, 7);
  weft::Tensor<T> t1 = make_tensor<T>(shape, 8), t2 = make_tensor<T>(shape, 9), t3 = make_tensor<T>(shape, 10);

  auto ea = emap(a), eb = emap(b), ec = emap(c), ed = emap(d), ey = emap(y_eigen);

  Variant fused{"weft fused", [&] { return time_ms([&] { y_fused = a * weft::sigmoid(b) + c * d; }); }};
  Variant eigen{"eigen tensor", [&] {
                  return time_ms([&] { ey.device(*ctx.device) = ea * eb.sigmoid() + ec * ed; });
                }};
  // bf16: Eigen can also compute in float and round once, as weft does.
  Variant eigen_f32{"eigen tensor (f32 math)", [&] {
                      return time_ms([&] {
                        ey.device(*ctx.device) = (ea.template cast<float>() * eb.template cast<float>().sigmoid() +
                                                  ec.template cast<float>() * ed.template cast<float>())
                                                     .template cast<ET>();
                      });
                    }};
  Variant eager{"op-by-op (4 kernels)", [&] {
                  return time_ms([&] {
                    t1 = weft::sigmoid(b);
                    t2 = a * t1;
                    t3 = c * d;
                    y_eager = t2 + t3;
                  });
                }};
  CopyBench copy(ctx.copy_src, ctx.copy_dst, double(n) * bpe);

  std::vector<Variant*> all;
  for (Variant& v : copy.variants) all.push_back(&v);
  all.push_back(&fused);
  all.push_back(&eigen);
  constexpr bool low = std::is_same_v<T, weft::bfloat16>;
  if (low) all.push_back(&eigen_f32);
  all.push_back(&eager);
  measure(all, ctx.warmup, ctx.reps);

  std::vector<Variant*> ours = {&fused, &eigen};
  if (low) ours.push_back(&eigen_f32);
  ours.push_back(&eager);
  report_workload(*ctx.report, workload, n, bpe, copy, ours);

  // Sanity: the variants agree (bf16 differs by rounding the intermediates).
  double tol = low ? 0.25 : 1e-4;
  double de = max_abs_diff(y_fused, y_eigen), dg = max_abs_diff(y_fused, y_eager);
  std::printf("%-34s   check: max|fused - eigen| = %.3g, max|fused - op-by-op| = %.3g%s\n", "", de, dg,
              de <= tol && dg <= tol ? "" : "  <-- MISMATCH");
  if (!(de <= tol && dg <= tol))
    ctx.report->notes.push_back(std::string(workload) + ": results disagree beyond tolerance");

  // bf16: the faster Eigen formulation is the peer.
  const Variant& peer = low && eigen_f32.med() < eigen.med() ? eigen_f32 : eigen;
  return {fused.ms, peer.ms, eager.ms, copy.best().ms};
}

// ---- workload 3: y = x + row ---------------------------------------------------

ChainResult bench_broadcast(CpuContext& ctx, std::int64_t rows, std::int64_t cols, const char* workload) {
  const double bpe = 8.0;
  weft::Tensor<float> x = make_tensor<float>({rows, cols}, 11), row = make_tensor<float>({cols}, 12);
  weft::Tensor<float> y_fused = make_tensor<float>({rows, cols}, 13), y_eigen = make_tensor<float>({rows, cols}, 14);

  EMap2<float> ex(x.data(), rows, cols), ey(y_eigen.data(), rows, cols);
  EMap2<float> erow(row.data(), 1, cols);
  Eigen::array<Eigen::Index, 2> bcast{rows, 1};

  Variant fused{"weft fused", [&] { return time_ms([&] { y_fused = x + row; }); }};
  Variant eigen{"eigen tensor", [&] {
                  return time_ms([&] { ey.device(*ctx.device) = ex + erow.broadcast(bcast); });
                }};
  CopyBench copy(ctx.copy_src, ctx.copy_dst, double(rows * cols) * bpe);

  std::vector<Variant*> all;
  for (Variant& v : copy.variants) all.push_back(&v);
  all.push_back(&fused);
  all.push_back(&eigen);
  measure(all, ctx.warmup, ctx.reps);
  report_workload(*ctx.report, workload, rows * cols, bpe, copy, {&fused, &eigen});

  double de = max_abs_diff(y_fused, y_eigen);
  std::printf("%-34s   check: max|fused - eigen| = %.3g%s\n", "", de, de <= 1e-6 ? "" : "  <-- MISMATCH");
  if (!(de <= 1e-6)) ctx.report->notes.push_back(std::string(workload) + ": results disagree");
  return {fused.ms, eigen.ms, {}, copy.best().ms};
}

int run_cpu(const Options& opt) {
  const int threads = max_threads();
  const int reps = opt.reps > 0 ? opt.reps : opt.quick ? 5 : 21;
  const int warmup = opt.quick ? 1 : 3;
  const std::int64_t n = std::int64_t(16) << 20;  // 16M elements
  const std::int64_t rows = 4096, cols = 4096;

  Report report;
  print_cpu_machine("pointwise", threads, "omp_get_max_threads; Eigen ThreadPoolDevice gets the same", report);
  std::printf("  Eigen %d.%d.%d, SIMD: %s\n", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION,
              Eigen::SimdInstructionSetsInUse());
  print_cpu_method(reps, warmup,
                   "  GB/s counts the bytes that must move (inputs read once, output written once), for every\n"
                   "  variant alike; 'vs copy' is that over the best copy of the same number of bytes\n\n");

  Eigen::ThreadPool pool(threads);
  Eigen::ThreadPoolDevice device(&pool, threads);

  // Copy buffers for the largest workload (fp32 chain: 20 bytes per element
  // moved, so 10 bytes per element in each buffer), first-touched in parallel.
  const std::int64_t copy_floats = n * 10 / 4 + 64;
  weft::Tensor<float> copy_src = make_tensor<float>({copy_floats}, 100), copy_dst = make_tensor<float>({copy_floats}, 101);

  CpuContext ctx{threads, warmup, reps, &pool, &device, copy_src.data(), copy_dst.data(), &report};

  print_header();
  ChainResult f32 = bench_chain<float>(ctx, n, "fp32 a*sigmoid(b)+c*d [16M]");
  std::printf("\n");
  ChainResult bf16 = bench_chain<weft::bfloat16>(ctx, n, "bf16 a*sigmoid(b)+c*d [16M]");
  std::printf("\n");
  ChainResult bc = bench_broadcast(ctx, rows, cols, "fp32 x + row [4096x4096]");

  report.targets = {
      make_target("fp32 fused: fraction of copy bandwidth", 0.85, "%", f32.copy, f32.fused),
      make_target("fp32 fused: speedup over Eigen", 1.0, "x", f32.eigen, f32.fused),
      make_target("fp32 fused: speedup over op-by-op", 2.2, "x", f32.op_by_op, f32.fused),
      make_target("bf16 fused: fraction of copy bandwidth", 0.85, "%", bf16.copy, bf16.fused),
      make_target("bf16 fused: speedup over Eigen (faster form)", 1.0, "x", bf16.eigen, bf16.fused),
      make_target("bf16 fused: speedup over op-by-op", 2.2, "x", bf16.op_by_op, bf16.fused),
      make_target("broadcast: fraction of copy bandwidth", 0.70, "%", bc.copy, bc.fused),
      make_target("broadcast: speedup over Eigen", 1.0, "x", bc.eigen, bc.fused),
  };
  print_targets(report.targets);
  std::printf("(the goals are set for fp32 and broadcast; the bf16 rows use the fp32 goals for reference)\n");

  return write_json_if_asked(opt, "pointwise", "cpu", threads, reps, weft::kCpuPacketIsa, report);
}

#endif  // !__CUDACC__

// =====================================================================
// CUDA
// =====================================================================
#if defined(__CUDACC__)

template <class T>
ChainResult bench_chain_cuda(CudaContext& ctx, std::int64_t n, const char* workload) {
  const double bpe = 5.0 * sizeof(T);
  weft::Tensor<T> a = make_cuda_tensor<T>(n, 1), b = make_cuda_tensor<T>(n, 2), c = make_cuda_tensor<T>(n, 3),
                  d = make_cuda_tensor<T>(n, 4);
  weft::Tensor<T> y = weft::empty<T>({n}, weft::Device::cuda()), y_eager = weft::empty<T>({n}, weft::Device::cuda());
  weft::Tensor<T> t1 = weft::empty<T>({n}, weft::Device::cuda()), t2 = weft::empty<T>({n}, weft::Device::cuda()),
                  t3 = weft::empty<T>({n}, weft::Device::cuda());
  Variant fused{"weft fused", [&] { return ctx.timer->ms([&] { y = a * weft::sigmoid(b) + c * d; }); }};
  Variant eager{"op-by-op (4 kernels)", [&] {
                  return ctx.timer->ms([&] {
                    t1 = weft::sigmoid(b);
                    t2 = a * t1;
                    t3 = c * d;
                    y_eager = t2 + t3;
                  });
                }};
  Variant copy = device_copy(ctx, double(n) * bpe);
  measure({&copy, &fused, &eager}, ctx.warmup, ctx.reps);
  report_cuda(ctx, workload, n, bpe, copy, {&fused, &eager});
  double dg = max_abs_diff_cuda(y, y_eager, std::min<std::int64_t>(n, 1 << 20));
  std::printf("%-34s   check: max|fused - op-by-op| = %.3g (first 1M elements)\n", "", dg);
  return {fused.ms, {}, eager.ms, copy.ms};
}

ChainResult bench_broadcast_cuda(CudaContext& ctx, std::int64_t rows, std::int64_t cols, const char* workload) {
  const double bpe = 8.0;
  weft::TensorView<float> x = make_cuda_tensor<float>(rows * cols, 11).view({rows, cols});
  weft::Tensor<float> row = make_cuda_tensor<float>(cols, 12);
  weft::Tensor<float> y = weft::empty<float>({rows, cols}, weft::Device::cuda());
  Variant fused{"weft fused", [&] { return ctx.timer->ms([&] { y = x + row; }); }};
  Variant copy = device_copy(ctx, double(rows * cols) * bpe);
  measure({&copy, &fused}, ctx.warmup, ctx.reps);
  report_cuda(ctx, workload, rows * cols, bpe, copy, {&fused});
  return {fused.ms, {}, {}, copy.ms};
}

int run_cuda(const Options& opt) {
  if (!have_cuda_device("pointwise")) return 0;
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  const int reps = opt.reps > 0 ? opt.reps : opt.quick ? 5 : 21;
  const int warmup = opt.quick ? 1 : 3;
  // 256M elements (fp32: 1 GiB per tensor); smaller when the device is small.
  std::int64_t n = std::int64_t(256) << 20;
  while (n > (std::int64_t(1) << 20) && double(n) * 4 * 12 > 0.8 * double(prop.totalGlobalMem)) n /= 2;
  std::int64_t rows = 16384, cols = n / 16384;

  std::printf("weft pointwise benchmark, cuda\n");
  std::printf("  device: %s (%.1f GiB), %lld elements per tensor\n", prop.name, prop.totalGlobalMem / 1073741824.0,
              (long long)n);
  std::printf("  reps: %d timed after %d warm-up round(s), variants interleaved; cudaEvent timing\n", reps, warmup);
  std::printf("  roofline: cudaMemcpy device-to-device of the same bytes (read + write counted)\n\n");

  EventTimer timer;
  char *src = nullptr, *dst = nullptr;
  std::size_t copy_bytes = std::size_t(n) * 10 + 256;
  check(cudaMalloc(&src, copy_bytes), "cudaMalloc");
  check(cudaMalloc(&dst, copy_bytes), "cudaMalloc");
  check(cudaMemset(src, 1, copy_bytes), "cudaMemset");
  check(cudaMemset(dst, 0, copy_bytes), "cudaMemset");
  Report report;
  CudaContext ctx{warmup, reps, &timer, src, dst, &report};

  print_header();
  ChainResult f32 = bench_chain_cuda<float>(ctx, n, "fp32 a*sigmoid(b)+c*d");
  std::printf("\n");
  ChainResult bf16 = bench_chain_cuda<weft::bfloat16>(ctx, n, "bf16 a*sigmoid(b)+c*d");
  std::printf("\n");
  ChainResult bc = bench_broadcast_cuda(ctx, rows, cols, "fp32 x + row");
  cudaFree(src);
  cudaFree(dst);

  report.targets = {
      make_target("fp32 fused: fraction of copy bandwidth", 0.85, "%", f32.copy, f32.fused),
      make_target("fp32 fused: speedup over op-by-op", 2.2, "x", f32.op_by_op, f32.fused),
      make_target("bf16 fused: fraction of copy bandwidth", 0.85, "%", bf16.copy, bf16.fused),
      make_target("bf16 fused: speedup over op-by-op", 2.2, "x", bf16.op_by_op, bf16.fused),
      make_target("broadcast: fraction of copy bandwidth", 0.70, "%", bc.copy, bc.fused),
  };
  print_targets(report.targets);
  return write_json_if_asked(opt, "pointwise", "cuda", 0, reps, prop.name, report);
}

#endif  // __CUDACC__

}  // namespace

int main(int argc, char** argv) {
#if defined(__CUDACC__)
  return weft_bench::run_main(argc, argv, "pointwise", "cuda", [](const Options& opt) {
    if (opt.device == "cpu") {
      std::printf("pointwise_cuda: the CPU benchmark is bench/pointwise (the host build, where Eigen keeps its "
                  "SIMD); nothing to run here\n");
      return 0;
    }
    return run_cuda(opt);
  });
#else
  return weft_bench::run_main(argc, argv, "pointwise", "cpu", [](const Options& opt) {
    return opt.device == "cuda" ? weft_bench::needs_cuda_build("pointwise") : run_cpu(opt);
  });
#endif
}

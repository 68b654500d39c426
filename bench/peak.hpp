// SPDX-License-Identifier: MIT
/// @file The machine's compute peaks, measured: fp32 and fp64 FMAs and bfloat16 dot products in register-only loops on every thread (measure_peaks), the roofline a GEMM's GFLOP/s is a fraction of.
//
// A large SGEMM (the roofline of bench/matmul_bf16) is itself a kernel with its own losses; these
// loops are what the cores can do at all. Each thread runs independent accumulator chains, enough
// of them to cover the instruction's latency times its throughput, whose operands never leave
// registers: the inner loop is the FMA (or dot-product) instruction and the loop counter, nothing
// else (objdump -d of bench/peak shows `vfmadd231ps %zmm, %zmm, %zmm` 16 times per iteration in an
// AVX-512 build). All threads run in one OpenMP parallel region at once, between two barriers,
// so the peak of all threads is what the cores reach together (clocks drop when every core runs
// wide vectors); the best of several runs is reported.
//
// FLOPs: 2 per multiply-add. vfmadd231ps zmm: 16 lanes = 32; vdpbf16ps zmm: 32 bf16 pairs = 64;
// tdpbf16ps: 16 x 16 x 32 = 8192 multiply-adds = 16384; bfmmla: a 2 x 4 by 4 x 2 product = 32.
// Host code only.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "weft/backend/cpu/gemm/amx.hpp"  // amx_permitted, GemmAmxKernel::Thread (tile configuration)
#include "weft/core/config.hpp"

#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#elif defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#endif

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace weft_bench {

/// Peaks of `threads` threads running at once, in GFLOP/s over all of them.
struct Peaks {
  int threads = 1;
  double fp32 = 0, fp64 = 0;
  double bf16 = 0;                  // 0 where the build has no bfloat16 dot-product instruction
  std::string fma_instruction;      // what the fp32 / fp64 loops run, e.g. "avx512 vfmadd231ps/pd"
  std::string bf16_instruction = "none";
};

namespace peak_detail {

/// Makes the compiler materialize what p points to (it cannot see that nobody reads it).
inline void keep(const void* p) { asm volatile("" : : "r"(p) : "memory"); }

/// `iters` steps of `Chains` independent chains acc = step(acc, x, y), all in registers; the
/// results are kept so that the loop is not removed.
template <int Chains, class Acc, class Operand, class Step>
void chains(std::int64_t iters, Acc init, Operand x, Operand y, Step step) {
  Acc acc[Chains];
  for (Acc& a : acc) a = init;
  for (std::int64_t i = 0; i < iters; ++i) {
    WEFT_HOST_UNROLL(32)
    for (int c = 0; c < Chains; ++c) acc[c] = step(acc[c], x, y);
  }
  Acc out[Chains];
  std::memcpy(out, acc, sizeof acc);
  keep(out);
}

/// One thread's loop of `iters` iterations and the FLOPs each iteration does.
struct Kernel {
  void (*run)(std::int64_t iters);
  double flops_per_iter;
};

// Chains per ISA: at least latency x instructions per cycle, within the register file. AVX-512:
// FMA latency 4 at 2 per cycle (Zen 5, Intel) needs 8; 16 leaves slack for vdpbf16ps (2 per
// cycle on Zen 5, measured: twice the fp32 FMA rate) and room for the 2 operands in 32 zmm
// registers. AVX2 has 16 ymm registers: 12 chains + 2 operands (latency 4-5 at 2 per cycle needs
// 8-10). NEON: 4 FMA pipes of latency 4 (Neoverse V2) need 16; 24 + 2 of 32 registers.
#if defined(__AVX512F__)
inline constexpr int kChains = 16;
#elif defined(__AVX2__) && defined(__FMA__)
inline constexpr int kChains = 12;
#elif defined(__aarch64__) && defined(__ARM_NEON)
inline constexpr int kChains = 24;
#else
inline constexpr int kChains = 8;
#endif

// Operands come from the iteration count so that the compiler cannot fold them into constants
// (or memory operands): each chain adds iters products of 1/iters^2, no overflow, no denormals.
inline float operand(std::int64_t iters) { return 1.0f / float(iters); }

#if defined(__AVX512F__)
inline constexpr const char* kFmaInstruction = "avx512 vfmadd231ps/pd zmm";
inline void fp32(std::int64_t n) {
  const __m512 x = _mm512_set1_ps(operand(n));
  chains<kChains>(n, _mm512_setzero_ps(), x, x, [](__m512 a, __m512 p, __m512 q) { return _mm512_fmadd_ps(p, q, a); });
}
inline void fp64(std::int64_t n) {
  const __m512d x = _mm512_set1_pd(operand(n));
  chains<kChains>(n, _mm512_setzero_pd(), x, x,
                  [](__m512d a, __m512d p, __m512d q) { return _mm512_fmadd_pd(p, q, a); });
}
inline constexpr double kFp32Flops = 32, kFp64Flops = 16;
#elif defined(__AVX2__) && defined(__FMA__)
inline constexpr const char* kFmaInstruction = "avx2 vfmadd231ps/pd ymm";
inline void fp32(std::int64_t n) {
  const __m256 x = _mm256_set1_ps(operand(n));
  chains<kChains>(n, _mm256_setzero_ps(), x, x, [](__m256 a, __m256 p, __m256 q) { return _mm256_fmadd_ps(p, q, a); });
}
inline void fp64(std::int64_t n) {
  const __m256d x = _mm256_set1_pd(operand(n));
  chains<kChains>(n, _mm256_setzero_pd(), x, x,
                  [](__m256d a, __m256d p, __m256d q) { return _mm256_fmadd_pd(p, q, a); });
}
inline constexpr double kFp32Flops = 16, kFp64Flops = 8;
#elif defined(__aarch64__) && defined(__ARM_NEON)
inline constexpr const char* kFmaInstruction = "neon fmla .4s/.2d";
inline void fp32(std::int64_t n) {
  const float32x4_t x = vdupq_n_f32(operand(n));
  chains<kChains>(n, vdupq_n_f32(0), x, x,
                  [](float32x4_t a, float32x4_t p, float32x4_t q) { return vfmaq_f32(a, p, q); });
}
inline void fp64(std::int64_t n) {
  const float64x2_t x = vdupq_n_f64(operand(n));
  chains<kChains>(n, vdupq_n_f64(0), x, x,
                  [](float64x2_t a, float64x2_t p, float64x2_t q) { return vfmaq_f64(a, p, q); });
}
inline constexpr double kFp32Flops = 8, kFp64Flops = 4;
#else
inline constexpr const char* kFmaInstruction = "portable multiply-add (as the compiler vectorizes it)";
inline void fp32(std::int64_t n) {
  chains<kChains>(n, 0.0f, operand(n), operand(n), [](float a, float p, float q) { return a + p * q; });
}
inline void fp64(std::int64_t n) {
  chains<kChains>(n, 0.0, double(operand(n)), double(operand(n)), [](double a, double p, double q) { return a + p * q; });
}
inline constexpr double kFp32Flops = 2, kFp64Flops = 2;
#endif

#if defined(__AVX512BF16__)
inline void dpbf16(std::int64_t n) {
  const __m512 f = _mm512_set1_ps(operand(n));
  const __m512bh x = _mm512_cvtne2ps_pbh(f, f);
  chains<kChains>(n, _mm512_setzero_ps(), x, x,
                  [](__m512 a, __m512bh p, __m512bh q) { return _mm512_dpbf16_ps(a, p, q); });
}
#endif

#if defined(__aarch64__) && defined(__ARM_FEATURE_BF16_VECTOR_ARITHMETIC)
inline void bfmmla(std::int64_t n) {
  std::uint32_t bits;
  const float f = operand(n);
  std::memcpy(&bits, &f, sizeof bits);
  const bfloat16x8_t x = vreinterpretq_bf16_u16(vdupq_n_u16(std::uint16_t(bits >> 16)));
  chains<kChains>(n, vdupq_n_f32(0), x, x,
                  [](float32x4_t a, bfloat16x8_t p, bfloat16x8_t q) { return vbfmmlaq_f32(a, p, q); });
}
#endif

#if WEFT_GEMM_AMX
/// 4 independent accumulator tiles fed by 2 A and 2 B tiles loaded once, as bench/amx_tiles's
/// "TDPBF16PS alone" (5.2 ns a product on one Sapphire Rapids core: the instruction's rate).
inline void amx(std::int64_t n) {
  const weft::detail::cpu::GemmAmxKernel::Thread tiles;
  alignas(64) std::uint16_t ab[16 * 32];
  std::uint32_t bits;
  const float f = operand(n);
  std::memcpy(&bits, &f, sizeof bits);
  std::fill(std::begin(ab), std::end(ab), std::uint16_t(bits >> 16));
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, ab, 64);
  _tile_loadd(5, ab, 64);
  _tile_loadd(6, ab, 64);
  _tile_loadd(7, ab, 64);
  for (std::int64_t i = 0; i < n; ++i) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
}
#endif

inline int thread_id() {
#if defined(_OPENMP)
  return omp_get_thread_num();
#else
  return 0;
#endif
}

/// Seconds of the best of `reps` runs of k.run(iters) on `threads` threads at once: one parallel
/// region, each run between two barriers, timed by thread 0 (after the closing barrier the
/// slowest thread is done).
inline double best_seconds([[maybe_unused]] int threads, const Kernel& k, std::int64_t iters, int reps) {
  using Clock = std::chrono::steady_clock;
  double best = std::numeric_limits<double>::infinity();
  Clock::time_point t0;
  WEFT_PRAGMA_OMP(omp parallel num_threads(threads))
  for (int r = 0; r < reps; ++r) {
    WEFT_PRAGMA_OMP(omp barrier)
    if (thread_id() == 0) t0 = Clock::now();
    k.run(iters);
    WEFT_PRAGMA_OMP(omp barrier)
    if (thread_id() == 0) best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

/// GFLOP/s of `threads` threads running k: the iteration count grows on one thread until a run
/// takes 2 ms (best of 3), is scaled to ~30 ms a run, and the best of 5 runs on all threads counts
/// (the first brings every core to its wide-vector clock). Sizing it on one thread keeps a busy
/// core from shrinking the runs: a short run on all threads mostly times the wait at the barrier
/// for a thread that has to share its core (8 ms for 2 us of work on the development VM).
inline double gflops(int threads, const Kernel& k) {
  std::int64_t iters = 1024;
  double s = best_seconds(1, k, iters, 3);
  for (; s < 2e-3; s = best_seconds(1, k, iters, 3)) iters *= 4;
  iters = std::max<std::int64_t>(1, std::int64_t(double(iters) * 30e-3 / s));
  s = best_seconds(threads, k, iters, 5);
  return double(threads) * double(iters) * k.flops_per_iter / s * 1e-9;
}

}  // namespace peak_detail

/// The fp32 and fp64 FMA peaks and the bfloat16 dot-product peak of `threads` threads running at
/// once (about a second per thread count). bf16: AMX tiles where the build has them and Linux
/// grants tile data, else AVX512-BF16 vdpbf16ps, else Arm BFMMLA, else none.
inline Peaks measure_peaks(int threads) {
  namespace d = peak_detail;
#if !defined(_OPENMP)
  threads = 1;  // a build without OpenMP runs the loops on the calling thread only
#endif
  Peaks p;
  p.threads = threads;
  p.fma_instruction = d::kFmaInstruction;
  p.fp32 = d::gflops(threads, {d::fp32, d::kChains * d::kFp32Flops});
  p.fp64 = d::gflops(threads, {d::fp64, d::kChains * d::kFp64Flops});
#if WEFT_GEMM_AMX
  if (weft::detail::cpu::amx_permitted()) {
    p.bf16_instruction = "amx-bf16 tdpbf16ps";
    p.bf16 = d::gflops(threads, {d::amx, 4 * 16384.0});
    return p;
  }
#endif
#if defined(__AVX512BF16__)
  p.bf16_instruction = "avx512-bf16 vdpbf16ps zmm";
  p.bf16 = d::gflops(threads, {d::dpbf16, d::kChains * 64.0});
#elif defined(__aarch64__) && defined(__ARM_FEATURE_BF16_VECTOR_ARITHMETIC)
  p.bf16_instruction = "neon bfmmla";
  p.bf16 = d::gflops(threads, {d::bfmmla, d::kChains * 32.0});
#endif
  return p;
}

}  // namespace weft_bench

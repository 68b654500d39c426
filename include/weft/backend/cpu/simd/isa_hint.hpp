// SPDX-License-Identifier: MIT
/// @file The one line a process prints when its x86-64 build uses narrower packets than the running CPU has.
///
/// x86-64 compilers target SSE2 unless told otherwise, so a program built without -march runs
/// 4-float packets on a CPU with 8- or 16-float ones. Measured on bench/pointwise (AVX-512 CPU,
/// builds of the same file in the same session, medians): the fused fp32 `a * sigmoid(b) + c * d`
/// ran about 3x faster at -march=native than at the default x86-64 (2.6x to 4.0x over four runs),
/// -mavx2 -mfma within ~15% of native; AVX2 to AVX-512 gained ~10% on fp32.
#pragma once

#include <atomic>
#include <string>
#include <string_view>

#include "weft/backend/cpu/simd/vec.hpp"
#include "weft/log/log.hpp"

// Host code, like the packet layer it reports on: nvcc's device pass skips it.
#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu {

/// The x86-64 vector levels that change weft's packets, narrowest first.
enum class X86Level : int { other, sse2, avx, avx2, avx512 };

/// What the running CPU (and its OS) supports, as __builtin_cpu_supports reports it.
struct CpuFeatures {
  bool avx = false, avx2 = false, fma = false, avx512f = false;
};

inline constexpr std::string_view kX86LevelNames[] = {"other", "sse2", "avx", "avx2", "avx512"};

/// The level of a build, from simd::kIsaName; `other` for a non-x86 packet layer.
constexpr X86Level build_x86_level(std::string_view isa) {
  for (int level = 1; level < 5; ++level)
    if (isa == kX86LevelNames[level]) return X86Level(level);
  return X86Level::other;
}

/// The widest level the CPU runs (AVX2 counts only with FMA: -mavx2 -mfma, x86-64-v3).
constexpr X86Level cpu_x86_level(CpuFeatures cpu) {
  return cpu.avx512f ? X86Level::avx512 : cpu.avx2 && cpu.fma ? X86Level::avx2 : cpu.avx ? X86Level::avx : X86Level::sse2;
}

/// The hint for a build whose packets are `build_isa` (simd::kIsaName) on a CPU with `cpu`, or ""
/// when the build already uses the CPU's widest level or is not an x86 one.
inline std::string isa_hint(std::string_view build_isa, CpuFeatures cpu) {
  const X86Level build = build_x86_level(build_isa), have = cpu_x86_level(cpu);
  if (build == X86Level::other || int(build) >= int(have)) return {};
  const bool below_avx2 = int(build) < int(X86Level::avx2);
  return cat("this build uses ", build_isa, " packets but the CPU has ", kX86LevelNames[int(have)],
             ": compile with -march=native",
             below_avx2 && have >= X86Level::avx2 ? " (or -mavx2 -mfma for any AVX2 machine)" : "",
             below_avx2 ? "; bench/pointwise's fused fp32 kernels ran about 3x faster with it"
                        : "; bench/pointwise's fused fp32 kernels ran about 10% faster with it",
             " (WEFT_LOGS=cpu=off silences this line)");
}

/// The running CPU's features; none off x86-64.
inline CpuFeatures running_cpu_features() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return {__builtin_cpu_supports("avx") != 0, __builtin_cpu_supports("avx2") != 0, __builtin_cpu_supports("fma") != 0,
          __builtin_cpu_supports("avx512f") != 0};
#else
  return {};
#endif
}

/// The first call with `printed` unset sets it and logs `hint` under `cpu` (nothing when "");
/// later calls print nothing.
inline void log_isa_hint_once(std::atomic<bool>& printed, const std::string& hint) {
  if (!printed.exchange(true, std::memory_order_relaxed) && !hint.empty()) log_write(LogComponent::cpu, hint);
}

/// Whether this process has had its one chance at the hint (printed it, or had none to print).
inline std::atomic<bool>& isa_hint_decided() {
  static std::atomic<bool> decided{false};
  return decided;
}

/// Called before each CPU kernel: the hint once per program. The cpu component is at the error level
/// unless WEFT_LOGS says otherwise (log/log.hpp): a portable build says once what it leaves unused,
/// as a compiler warns, and `cpu=off` silences it.
inline void hint_isa_once() {
  if (!log_enabled(LogComponent::cpu, LogLevel::error)) return;
  std::atomic<bool>& decided = isa_hint_decided();
  if (decided.load(std::memory_order_relaxed)) return;
  log_isa_hint_once(decided, isa_hint(simd::kIsaName, running_cpu_features()));
}

}  // namespace weft::detail::cpu

#endif  // !__CUDA_ARCH__

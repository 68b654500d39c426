// SPDX-License-Identifier: MIT
/// @file What this translation unit's CPU kernels were built for: the packet layer (its instruction set and width) and how bfloat16 is stored.
#pragma once

#include "weft/backend/cpu/simd/vec.hpp"

namespace weft {

// nvcc's device pass has no SIMD layer (backend/cpu/simd/vec.hpp).
#if !defined(__CUDA_ARCH__)
/// The CPU packet layer: "avx512", "avx2", "avx", "sse2", "neon" or "generic" (docs/backends.md).
inline constexpr const char* kCpuPacketIsa = detail::simd::kIsaName;
/// Bytes per packet (64 for AVX-512, 32 for AVX2, 16 for SSE2 and NEON).
inline constexpr int kCpuPacketBytes = detail::simd::kBytes;
/// How a packet of floats becomes bfloat16: "avx512-bf16" (vcvtneps2bf16), "neon-bf16" (BFCVTN) or
/// "integer" (round to nearest even in integer code).
inline constexpr const char* kCpuBf16Store = detail::simd::kBfloat16Conversion;
#endif

}  // namespace weft

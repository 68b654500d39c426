// SPDX-License-Identifier: MIT
/// @file Compiler and target macros shared by every weft header.
#pragma once

// The oldest compilers weft is built and tested with. An older one stops here with one line that
// says so, instead of dozens of errors deep in the headers (clang 14 has no floating-point
// template arguments, g++ 11 misses parts of C++20); weft.hpp reads nothing more after it.
#if defined(__clang__) && __clang_major__ < 15
#error "weft needs g++ >= 12 or clang >= 15 (C++20); this clang is older"
#define WEFT_COMPILER_UNSUPPORTED 1
#elif defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 12
#error "weft needs g++ >= 12 or clang >= 15 (C++20); this g++ is older"
#define WEFT_COMPILER_UNSUPPORTED 1
#elif __cplusplus < 202002L
#error "weft needs C++20: compile with -std=c++20 (g++ >= 12 or clang >= 15)"
#define WEFT_COMPILER_UNSUPPORTED 1
#else
#define WEFT_COMPILER_UNSUPPORTED 0
#endif

#include <cstdint>

#if defined(__CUDACC__)
#define WEFT_HOST_DEVICE __host__ __device__
#else
#define WEFT_HOST_DEVICE
#endif

#if defined(__CUDACC__) && !defined(__CUDA_ARCH__)
#define WEFT_NVCC_HOST_PASS 1
#endif

// Code that launches kernels differs between a translation unit compiled by
// nvcc and one compiled by a host compiler. Functions whose bodies depend on
// that live in a differently named inline namespace, so the linker never
// merges the two versions of one inline function (an ODR violation).
#if defined(__CUDACC__)
#define WEFT_BACKEND_ABI cuda_tu
#else
#define WEFT_BACKEND_ABI host_tu
#endif

// The namespace protects a function itself, not the inline functions that call it: a template
// such as weft::eval<E> calls cuda_tu::run_statements in one file and host_tu::run_statements in
// another, and would again be one symbol with two bodies. So every free function (and class, such
// as the optimizers) that can reach a backend lives in WEFT_BACKEND_ABI too, and the members of the
// types shared between files (Tensor, TensorList) that can reach one are WEFT_ABI_INLINE: always
// inlined into their caller, they are never a symbol the linker could merge. scripts/check-odr
// checks the objects of a build (docs/architecture.md, ODR safety).
#define WEFT_ABI_INLINE __attribute__((always_inline))

// The checks, plans and log printers that every kernel shares (ordinary functions over
// type-erased operands: check_statements, plan_statements, print_kernel, parse_logs, ...) are
// WEFT_SHARED: inline, compiled in every file that runs a kernel (0.6 s of a file with one fused
// expression), unless the program links the weft_kernels library (WEFT_PRECOMPILED_KERNELS):
// then its host files only declare them, and src/kernels.cpp (WEFT_KERNELS_LIBRARY) holds their
// one definition. nvcc files keep them inline: their host code is in another ABI namespace.
// WEFT_LINKED_KERNELS: this is such a host file (the attention kernels' extern templates follow
// it too).
#if defined(WEFT_PRECOMPILED_KERNELS) && !defined(__CUDACC__) && !defined(WEFT_KERNELS_LIBRARY)
#define WEFT_LINKED_KERNELS 1
#else
#define WEFT_LINKED_KERNELS 0
#endif
#if defined(WEFT_KERNELS_LIBRARY)
#define WEFT_SHARED
#define WEFT_SHARED_BODIES 1
#elif WEFT_LINKED_KERNELS
#define WEFT_SHARED
#define WEFT_SHARED_BODIES 0
#else
#define WEFT_SHARED inline
#define WEFT_SHARED_BODIES 1
#endif

#if defined(_OPENMP)
#define WEFT_PRAGMA_OMP(x) _Pragma(#x)
#else
#define WEFT_PRAGMA_OMP(x)
#endif

/// GCC's unroll hint for host loops, WEFT_HOST_UNROLL(8). nvcc's front end parses host code too,
/// does not know `#pragma GCC unroll` and warns (#1675), so the hint is dropped there.
#if defined(__CUDACC__)
#define WEFT_HOST_UNROLL(n)
#else
#define WEFT_HOST_UNROLL(n) _Pragma(WEFT_HOST_UNROLL_TEXT(GCC unroll n))
#define WEFT_HOST_UNROLL_TEXT(x) #x
#endif

namespace weft {

/// The largest tensor rank weft handles; extents live inline in the handle.
inline constexpr int kMaxRank = 8;

}  // namespace weft

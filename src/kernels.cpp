// SPDX-License-Identifier: MIT
/// @file The optional precompiled kernels (the weft_kernels library): Eigen's GEMM behind matmul, weft's FMA GEMM, the CPU attention (flash and math backends) and the convolution engines for float and double, and the checks, plans and log printers every kernel shares, compiled once for a program whose files define WEFT_PRECOMPILED_KERNELS.
///
/// Header-only stays the default: without the macro every file instantiates what it calls. With
/// it (meson: weft_kernels_dep; CMake: weft::kernels, which define it for their users), the
/// headers declare these and no file parses Eigen or compiles them. Built with the program's own
/// flags (-march): the kernels inside are those of its ISA.
#undef WEFT_PRECOMPILED_KERNELS  // this file holds the definitions
#define WEFT_KERNELS_LIBRARY      // ... also the one definition of each WEFT_SHARED function (core/config.hpp)

#include "weft/backend/cpu/attention/flash.hpp"
#include "weft/backend/cpu/conv.hpp"
#include "weft/backend/cpu/gemm/eigen.hpp"
#include "weft/backend/cpu/gemm/fma.hpp"
#include "weft/log/log.hpp"
#include "weft/nn/sdpa_math.hpp"
#include "weft/plan/foreach.hpp"
#include "weft/plan/iteration.hpp"
#include "weft/plan/kernel_operands.hpp"
#include "weft/plan/print.hpp"
#include "weft/plan/reduction.hpp"
#include "weft/plan/statements.hpp"

namespace weft::detail::cpu {

template void eigen_product<float>(const float*, std::int64_t, bool, const float*, std::int64_t, bool, float*,
                                   std::int64_t, std::int64_t, std::int64_t, int);
template void eigen_product<double>(const double*, std::int64_t, bool, const double*, std::int64_t, bool, double*,
                                    std::int64_t, std::int64_t, std::int64_t, int);
WEFT_GEMM_FMA_INSTANCES(, float)
WEFT_GEMM_FMA_INSTANCES(, double)
WEFT_CONV_INSTANCES(, float)
WEFT_CONV_INSTANCES(, double)
// The register blocks that attention and the convolutions call from the program's own files too.
WEFT_BLOCK_GEMM_INSTANCES(, float)
WEFT_BLOCK_GEMM_INSTANCES(, double)
WEFT_DIRECT_TILE_INSTANCES(, float)
WEFT_DIRECT_TILE_INSTANCES(, double)

}  // namespace weft::detail::cpu

namespace weft::detail::cpu::flash {

template void flash_forward_cpu<float>(const FlashProblem<float>&, float*, double*);
template void flash_forward_cpu<double>(const FlashProblem<double>&, double*, double*);
template void flash_backward_cpu<float>(const FlashProblem<float>&, const SdpaRows<float>&, const SdpaRows<float>&,
                                        const double*, float*, float*, float*);
template void flash_backward_cpu<double>(const FlashProblem<double>&, const SdpaRows<double>&,
                                         const SdpaRows<double>&, const double*, double*, double*, double*);

}  // namespace weft::detail::cpu::flash

namespace weft::nn::detail {

template SdpaMathState<float> sdpa_math_forward<float>(const SdpaRows<float>&, const SdpaRows<float>&,
                                                       const SdpaRows<float>&, const SdpaRows<float>&,
                                                       const SdpaShape&);
template SdpaMathState<double> sdpa_math_forward<double>(const SdpaRows<double>&, const SdpaRows<double>&,
                                                         const SdpaRows<double>&, const SdpaRows<double>&,
                                                         const SdpaShape&);
template SdpaMathGradients<float> sdpa_math_backward<float>(const SdpaRows<float>&, const SdpaMathState<float>&,
                                                            const SdpaShape&);
template SdpaMathGradients<double> sdpa_math_backward<double>(const SdpaRows<double>&, const SdpaMathState<double>&,
                                                              const SdpaShape&);

}  // namespace weft::nn::detail

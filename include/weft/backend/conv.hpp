// SPDX-License-Identifier: MIT
/// @file Convolutions handed to the kernels of the data's device: the CPU's implicit GEMMs (cpu/conv.hpp) for float and double, and bfloat16 where a native bfloat16 GEMM is built; other devices fail with the fix.
#pragma once

#include <cstdint>
#include <vector>

#include "weft/backend/cpu/conv.hpp"
#include "weft/core/tensor.hpp"
#include "weft/plan/conv_geometry.hpp"

namespace weft::detail {
inline namespace WEFT_BACKEND_ABI {

/// Fails unless `device` is the CPU: the convolutions have no CUDA kernels yet.
inline void require_cpu_conv(const char* op, Device device) {
  if (!device.is_cpu())
    fail(op, "runs on the CPU only so far; got a tensor on ", device, ": copy it with .to(Device::cpu()) first");
}

/// A 4-D view as the kernels read it (any strides: NCHW, channels-last, sliced).
template <class T, class U>
cpu::Strided4<T> strided4(const TensorView<U>& v) {
  const Strides& s = v.strides();
  return cpu::Strided4<T>{v.data(), s[0], s[1], s[2], s[3]};
}

#if !defined(__CUDA_ARCH__)
/// The elements of a convolution's packed weight panels in T (cpu::ConvKernel's).
template <class T>
using conv_packed_t = typename cpu::ConvKernel<T>::Packed;
#else
template <class T>
using conv_packed_t = T;  // nvcc's device pass runs no CPU kernel
#endif

/// Whether this build can run convolutions with T operands (cpu::conv_native_built_v).
template <class T>
inline constexpr bool conv_native_built_v =
#if !defined(__CUDA_ARCH__)
    cpu::conv_native_built_v<T>;
#else
    !is_16bit_float_v<T>;
#endif

/// Whether convolutions in T run with T operands (cpu::conv_native: float, double, and bfloat16
/// where a native bfloat16 GEMM is built and permitted); otherwise the caller computes in float.
template <class T>
bool conv_native() {
#if !defined(__CUDA_ARCH__)
  return cpu::conv_native<T>();
#else
  return !is_16bit_float_v<T>;
#endif
}

/// The bfloat16 GEMM a native bfloat16 convolution runs on, for logs (cpu::bf16_gemm_path).
inline const char* conv_bf16_path() {
#if !defined(__CUDA_ARCH__)
  return cpu::bf16_gemm_path();
#else
  return "none";
#endif
}

/// The prepacked forward weights of a convolution (the GEMM's panels, per group) for inputs with
/// x's strides (the panels' column order follows the input's layout).
template <class T>
std::vector<conv_packed_t<T>> conv2d_prepack(const ConvGeometry& geo, const cpu::Strided4<const T>& x,
                                             const TensorView<const T>& w) {
#if !defined(__CUDA_ARCH__)
  return cpu::conv_forward_weights(geo, cpu::conv_forward_patches(geo, x, 0), w.data());
#else
  (void)geo, (void)x, (void)w;
  return {};
#endif
}

/// out = conv(x, w) (w contiguous [O, C/g, kH, kW]; or its panels, `prepacked`) followed by the
/// epilogue (bias, relu, residual: cpu::ConvEpilogue), any layouts of x and out; T with
/// conv_native<T>().
template <class T>
void conv2d_forward(const ConvGeometry& geo, const TensorView<const T>& x, const TensorView<const T>& w,
                    const conv_packed_t<T>* prepacked, const cpu::ConvEpilogue<T>& epilogue, const TensorView<T>& out) {
#if !defined(__CUDA_ARCH__)
  cpu::conv2d_forward(geo, strided4<const T>(x), w.data(), prepacked, epilogue, strided4<T>(out));
#else
  (void)geo, (void)x, (void)w, (void)prepacked, (void)epilogue, (void)out;
#endif
}

/// dx = the input gradient of conv(., w) for dy.
template <class T>
void conv2d_backward_input(const ConvGeometry& geo, const TensorView<const T>& dy, const TensorView<const T>& w,
                           const TensorView<T>& dx) {
#if !defined(__CUDA_ARCH__)
  cpu::conv2d_backward_input(geo, strided4<const T>(dy), w.data(), strided4<T>(dx));
#else
  (void)geo, (void)dy, (void)w, (void)dx;
#endif
}

/// dw (contiguous [O, C/g, kH, kW]) = the weight gradient of conv(x, .) for dy.
template <class T>
void conv2d_backward_weight(const ConvGeometry& geo, const TensorView<const T>& x, const TensorView<const T>& dy,
                            const TensorView<T>& dw) {
#if !defined(__CUDA_ARCH__)
  cpu::conv2d_backward_weight(geo, strided4<const T>(x), strided4<const T>(dy), dw.data());
#else
  (void)geo, (void)x, (void)dy, (void)dw;
#endif
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail

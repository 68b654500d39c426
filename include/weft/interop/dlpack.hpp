// SPDX-License-Identifier: MIT
/// @file DLPack: to_dlpack and from_dlpack exchange tensors with other frameworks without copying (DLPack 0.6's DLManagedTensor).
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "weft/core/dtype.hpp"
#include "weft/core/error.hpp"
#include "weft/core/from_blob.hpp"
#include "weft/core/tensor.hpp"

namespace weft {

namespace detail {

/// DLPack's code for bool (kDLBool, added after 0.6; numpy and PyTorch 2 use it: one byte, 0 or 1).
inline constexpr std::uint8_t kDLBoolCode = 6;

/// DLPack's description of element type T: (code, bits, lanes = 1).
template <Element T>
constexpr DLDataType dl_dtype() {
  constexpr std::uint8_t code = std::is_same_v<T, bool>       ? kDLBoolCode
                                : std::is_same_v<T, bfloat16> ? std::uint8_t(kDLBfloat)
                                : is_floating_v<T>            ? std::uint8_t(kDLFloat)
                                : std::is_unsigned_v<T>       ? std::uint8_t(kDLUInt)
                                                              : std::uint8_t(kDLInt);
  return DLDataType{code, std::uint8_t(8 * sizeof(T)), 1};
}

inline const char* dl_code_name(std::uint8_t code) {
  switch (code) {
    case kDLInt: return "kDLInt";
    case kDLUInt: return "kDLUInt";
    case kDLFloat: return "kDLFloat";
    case kDLOpaqueHandle: return "kDLOpaqueHandle";
    case kDLBfloat: return "kDLBfloat";
    case kDLComplex: return "kDLComplex";
    case kDLBoolCode: return "kDLBool";
    default: return "an unknown code";
  }
}

/// "kDLFloat (2), 16 bits, 1 lane": a DLDataType for messages.
inline std::string dl_dtype_text(DLDataType t) {
  return cat(dl_code_name(t.code), " (", int(t.code), "), ", int(t.bits), " bits, ", int(t.lanes),
             t.lanes == 1 ? " lane" : " lanes");
}

/// What to_dlpack hands out: the DLManagedTensor, the shape and strides it points to, and a handle
/// to the weft storage, which keeps the elements alive until the consumer calls the deleter.
struct DLPackExport {
  DLManagedTensor managed{};
  std::shared_ptr<Storage> storage;
  std::int64_t shape[kMaxRank] = {};
  std::int64_t strides[kMaxRank] = {};
};

inline void delete_dlpack_export(DLManagedTensor* self) { delete static_cast<DLPackExport*>(self->manager_ctx); }

}  // namespace detail

/// A DLPack tensor of x's elements (no copy): data is the storage's start and byte_offset the
/// view's offset in it, strides are always given (in elements), the device is kDLCPU or kDLCUDA
/// with its index. The caller owns the result: call its deleter once when done (a DLPack consumer
/// does), which releases weft's handle to the elements. bool is DLPack's kDLBool (code 6, 8 bits).
/// DLPack 0.6 has no read-only flag: a consumer may write the elements of a const tensor.
template <Element T>
DLManagedTensor* to_dlpack(const TensorBase<T>& x) {
  if (!x.defined()) detail::fail("to_dlpack", "the tensor is undefined (it has no elements to share)");
  auto out = std::make_unique<detail::DLPackExport>();
  out->storage = x.storage();
  for (int d = 0; d < x.dim(); ++d) {
    out->shape[d] = x.shape()[d];
    out->strides[d] = x.strides()[d];
  }
  DLTensor& t = out->managed.dl_tensor;
  t.data = x.storage()->data();
  t.device = x.device().is_cuda() ? DLDevice{kDLCUDA, x.device().index()} : DLDevice{kDLCPU, 0};
  t.ndim = x.dim();
  t.dtype = detail::dl_dtype<T>();
  t.shape = out->shape;
  t.strides = out->strides;
  t.byte_offset = std::uint64_t(x.offset()) * sizeof(T);
  out->managed.manager_ctx = out.get();
  out->managed.deleter = &detail::delete_dlpack_export;
  return &out.release()->managed;
}

/// A view of a DLPack tensor's elements (no copy); weft takes the tensor over: the producer's
/// deleter runs exactly once, when the last handle to the elements dies. `E` is the element type
/// expected (`const T` for a read-only view): its (code, bits, lanes) must be the tensor's, and
/// the device kDLCPU or kDLCUDA (-> Device::cuda(device_id)). strides == NULL means compact
/// row-major; byte_offset must be a multiple of the element size. On any mismatch weft::Error
/// says what was passed and what was expected, and NOTHING is taken over: the caller still owns
/// the tensor and calls its deleter.
template <class E>
  requires Element<std::remove_const_t<E>>
TensorView<E> from_dlpack(DLManagedTensor* managed) {
  using T = std::remove_const_t<E>;
  constexpr const char* op = "from_dlpack";
  if (!managed) detail::fail(op, "the DLManagedTensor pointer is null");
  const DLTensor& t = managed->dl_tensor;
  constexpr DLDataType want = detail::dl_dtype<T>();
  if (t.dtype.code != want.code || t.dtype.bits != want.bits || t.dtype.lanes != want.lanes)
    detail::fail(op, "the tensor's dtype is ", detail::dl_dtype_text(t.dtype), ", expected ",
                 detail::dl_dtype_text(want), " for ", dtype_name<T>(),
                 "; call from_dlpack with the tensor's element type, or convert it in the producer");
  Device device = Device::cpu();
  if (t.device.device_type == kDLCUDA) device = Device::cuda(t.device.device_id);
  else if (t.device.device_type != kDLCPU)
    detail::fail(op, "the tensor is on DLPack device type ", int(t.device.device_type), " (id ", t.device.device_id,
                 "), expected kDLCPU (1) or kDLCUDA (2); copy it to the host or a CUDA device first");
  if (t.ndim < 0 || t.ndim > kMaxRank)
    detail::fail(op, "the tensor has ", t.ndim, " dims, expected 0 to ", kMaxRank);
  if (t.ndim > 0 && !t.shape) detail::fail(op, "the tensor has ", t.ndim, " dims but no shape array");
  if (t.byte_offset % sizeof(T) != 0)
    detail::fail(op, "byte_offset ", t.byte_offset, " is not a multiple of the element size ", sizeof(T));
  const Shape shape(t.shape, t.shape + t.ndim);
  const Strides strides = t.strides ? Strides(t.strides, t.strides + t.ndim) : contiguous_strides(shape);
  const std::int64_t offset = std::int64_t(t.byte_offset / sizeof(T));
  detail::check_blob(op, t.data, shape, strides);
  // Taken over from here on: only the deleter releases the tensor.
  const std::size_t bytes = t.byte_offset + detail::spanned_bytes(shape, strides, sizeof(T));
  auto storage = detail::borrow(t.data, bytes, device, [managed](void*) {
    if (managed->deleter) managed->deleter(managed);
  });
  return TensorView<E>(std::move(storage), shape, strides, offset);
}

}  // namespace weft

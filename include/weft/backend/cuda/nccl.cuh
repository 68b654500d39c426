// SPDX-License-Identifier: MIT
/// @file NCCL on flat device buffers (nvcc with WEFT_DIST_NCCL): a communicator from a unique id, and the four collectives on the legacy default stream where weft's kernels run.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "weft/core/cuda_device.hpp"
#include "weft/core/device.hpp"
#include "weft/core/dtype.hpp"
#include "weft/core/error.hpp"

namespace weft::detail::cuda::nccl {

/// Throws weft::Error naming the NCCL call, NCCL's text for the code and its last error message.
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_nccl_error(ncclResult_t result, const char* call,
                                                                    ncclComm_t comm) {
  const char* last = ncclGetLastError(comm);
  throw Error(cat("weft::dist: NCCL call ", call, " failed: ", ncclGetErrorString(result),
                  last && *last ? std::string(" (") + last + ")" : std::string()));
}

inline void check_nccl(ncclResult_t result, const char* call, ncclComm_t comm = nullptr) {
  if (result != ncclSuccess) [[unlikely]] throw_nccl_error(result, call, comm);
}

/// NCCL's datatype of T; bool travels as bytes (sum and max reduce it as a logical or, min as and).
/// NCCL has no 16-bit integer type: an int16 CUDA collective throws (MPI moves CPU int16 tensors).
template <Element T>
ncclDataType_t datatype() {
  if constexpr (std::is_same_v<T, std::int16_t>)
    throw Error("weft::dist: NCCL has no int16 type; cast<std::int32_t>() the CUDA tensor for the collective");
  else if constexpr (std::is_same_v<T, float>) return ncclFloat32;
  else if constexpr (std::is_same_v<T, double>) return ncclFloat64;
  else if constexpr (std::is_same_v<T, half>) return ncclFloat16;
  else if constexpr (std::is_same_v<T, bfloat16>) return ncclBfloat16;
  else if constexpr (std::is_same_v<T, std::int8_t>) return ncclInt8;
  else if constexpr (std::is_same_v<T, std::int32_t>) return ncclInt32;
  else if constexpr (std::is_same_v<T, std::int64_t>) return ncclInt64;
  else return ncclUint8;  // uint8, bool
}

}  // namespace weft::detail::cuda::nccl
